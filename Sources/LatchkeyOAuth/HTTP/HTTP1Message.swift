#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// HTTP/1.1's message syntax (RFC 9112) as the client needs it: the request it writes and
/// the response it reads, every part of which is bounded, since the server is a stranger
/// until its answer has been checked.
enum HTTP1Message {
    /// Largest status line and header section accepted (RFC 9112 §2.3 leaves the limit to
    /// the recipient; real providers send well under 8 KiB).
    static let maximumHeaderSize = 64 * 1024
    /// Largest chunk-size line, extensions included (RFC 9112 §7.1).
    static let maximumChunkLineSize = 1024
    /// CRLF, which ends every line of a message (RFC 9112 §2.1).
    static let lineBreak = "\u{0D}\u{0A}"
    /// The fields the transport writes itself, whatever the caller's request says.
    static let transportFields: Set<String> = Set(["Host", "Content-Length", "Transfer-Encoding", "Connection"].map { $0.lowercased() })

    /// The request's bytes: request line with the origin-form target (§3.2.1), `Host`
    /// (§3.2), the caller's fields, `Content-Length` for a body, and `Connection: close`
    /// (§9.6), since every exchange has a connection of its own.
    static func request(_ request: TransportRequest, userAgent: String) throws -> Data {
        guard let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false), let host = components.host, !host.isEmpty else {
            throw OAuthError.insecureTransport(reason: "\(request.url.absoluteString) is not an absolute URL")
        }
        guard isToken(request.method) else {
            throw OAuthError.network(reason: "the request method \(request.method.debugDescription) is not an HTTP token")
        }
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        guard target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw OAuthError.network(reason: "the request target of \(host) has characters a request line cannot carry")
        }
        let authority = (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host) + (components.port.map { ":\($0)" } ?? "")
        var head = "\(request.method) \(target) HTTP/1.1\r\nHost: \(authority)\r\n"
        var named: Set<String> = []
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            // A CR or LF in a value would end the field and start a field (or a request)
            // of the value's choosing: request splitting.
            guard isToken(name), value.utf8.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw OAuthError.network(reason: "the request header \(name.debugDescription) is not a valid HTTP field")
            }
            let lowered = name.lowercased()
            guard !transportFields.contains(lowered) else { continue }
            named.insert(lowered)
            head += "\(name): \(value)\r\n"
        }
        if !named.contains("user-agent") { head += "User-Agent: \(userAgent)\r\n" }
        if let body = request.body {
            head += "Content-Length: \(body.count)\r\n"
        } else if ["POST", "PUT", "PATCH"].contains(request.method) {
            head += "Content-Length: 0\r\n"
        }
        head += "Connection: close\r\n\r\n"
        var bytes = Data(head.utf8)
        if let body = request.body { bytes.append(body) }
        return bytes
    }

    /// RFC 9110 §5.6.2's token.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}

/// Reads one response (RFC 9112 §2.1) from a byte source: skips interim 1xx responses,
/// then the body by `Transfer-Encoding: chunked` (§7.1), `Content-Length` (§6.3) or the
/// end of the stream. Ambiguous framing (both, or two lengths that differ) is refused, as
/// §6.3 asks, since it is how a response is smuggled past a proxy.
struct HTTP1ResponseReader {
    /// The next bytes from the server; empty at the end of the stream.
    let receive: () throws -> Data
    let maximumBodySize: Int
    let host: String
    private var buffer = Data()
    private var ended = false

    /// OWS: spaces and horizontal tabs around a field value or a chunk size (RFC 9110 §5.6.3).
    private static func isOptionalWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t"
    }

    init(host: String, maximumBodySize: Int, receive: @escaping () throws -> Data) {
        self.host = host
        self.maximumBodySize = maximumBodySize
        self.receive = receive
    }

    mutating func response(method: String) throws -> TransportResponse {
        while true {
            let (status, headers) = try head()
            if (100..<200).contains(status), status != 101 { continue }
            let body = try self.body(status: status, method: method, headers: headers)
            return TransportResponse(status: status, headers: headers, body: body)
        }
    }

    private mutating func head() throws -> (Int, [String: String]) {
        let end = Data((HTTP1Message.lineBreak + HTTP1Message.lineBreak).utf8)
        var searchFrom = 0
        while true {
            if let range = buffer[(buffer.startIndex + searchFrom)...].firstRange(of: end) {
                let section = buffer[buffer.startIndex..<range.lowerBound]
                buffer = Data(buffer[range.upperBound...])
                return try Self.parse(head: Data(section), host: host)
            }
            guard buffer.count <= HTTP1Message.maximumHeaderSize else {
                throw OAuthError.responseTooLarge(reason: "the response head from \(host) exceeds \(HTTP1Message.maximumHeaderSize) bytes")
            }
            searchFrom = max(0, buffer.count - 3)
            guard try fill() else {
                throw OAuthError.network(reason: buffer.isEmpty ? "\(host) closed the connection without answering" : "\(host) closed the connection in the middle of the response head")
            }
        }
    }

    static func parse(head: Data, host: String) throws -> (Int, [String: String]) {
        guard let text = String(data: head, encoding: .isoLatin1) else { throw OAuthError.malformedResponse(reason: "unreadable response head from \(host)") }
        var lines = text.components(separatedBy: HTTP1Message.lineBreak)
        let statusLine = lines.removeFirst()
        // status-line = HTTP-version SP status-code SP [ reason-phrase ] (§4)
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0", parts[1].utf8.count == 3, let status = Int(parts[1]), (100...599).contains(status) else {
            throw OAuthError.malformedResponse(reason: "\(host) did not answer with an HTTP/1.1 status line")
        }
        var headers: [String: String] = [:]
        for line in lines {
            // Obsolete line folding (§5.2) and fields without a colon are refused.
            guard let colon = line.firstIndex(of: ":"), !line.hasPrefix(" "), !line.hasPrefix("\t") else {
                throw OAuthError.malformedResponse(reason: "a malformed header field in the response from \(host)")
            }
            let name = String(line[..<colon])
            guard HTTP1Message.isToken(name) else {
                throw OAuthError.malformedResponse(reason: "a malformed header field name in the response from \(host)")
            }
            let value = line[line.index(after: colon)...].trimmingScalars(where: Self.isOptionalWhitespace)
            guard !value.utf8.contains(where: { $0 == 0 || $0 == 0x0D || $0 == 0x0A }) else {
                throw OAuthError.malformedResponse(reason: "a header field value with control characters in the response from \(host)")
            }
            let key = name.lowercased()
            // Repeated fields combine as a list (RFC 9110 §5.3).
            headers[key] = headers[key].map { $0 + ", " + value } ?? value
        }
        return (status, headers)
    }

    private mutating func body(status: Int, method: String, headers: [String: String]) throws -> Data {
        if method == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status) { return Data() }
        if let coding = headers["transfer-encoding"] {
            guard headers["content-length"] == nil else {
                throw OAuthError.malformedResponse(reason: "the response from \(host) has both Transfer-Encoding and Content-Length")
            }
            guard coding.lowercased() == "chunked" else {
                throw OAuthError.malformedResponse(reason: "the response from \(host) uses the transfer coding \(coding.debugDescription); only chunked is read")
            }
            return try chunked()
        }
        if let field = headers["content-length"] {
            let values = Set(field.split(separator: ",").map { $0.trimmingSpaces() })
            guard values.count == 1, let value = values.first, !value.isEmpty, value.utf8.count <= 18, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(value) else {
                throw OAuthError.malformedResponse(reason: "the response from \(host) has an invalid Content-Length")
            }
            guard length <= maximumBodySize else { throw tooLarge() }
            while buffer.count < length {
                guard try fill() else { throw OAuthError.network(reason: "\(host) closed the connection before the end of the response body") }
            }
            return Data(buffer.prefix(length))
        }
        while try fill() {
            guard buffer.count <= maximumBodySize else { throw tooLarge() }
        }
        guard buffer.count <= maximumBodySize else { throw tooLarge() }
        return buffer
    }

    private mutating func chunked() throws -> Data {
        var body = Data()
        while true {
            let line = try self.line(maximum: HTTP1Message.maximumChunkLineSize)
            let sizeText = line.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map { $0.trimmingScalars(where: Self.isOptionalWhitespace) } ?? ""
            guard !sizeText.isEmpty, sizeText.utf8.count <= 15, let size = Int(sizeText, radix: 16), size >= 0 else {
                throw OAuthError.malformedResponse(reason: "a malformed chunk size in the response from \(host)")
            }
            if size == 0 {
                // Trailer fields (§7.1.2) are read and dropped, within the head's bound.
                var trailerBytes = 0
                while true {
                    let trailer = try self.line(maximum: HTTP1Message.maximumHeaderSize)
                    if trailer.isEmpty { return body }
                    trailerBytes += trailer.utf8.count
                    guard trailerBytes <= HTTP1Message.maximumHeaderSize else {
                        throw OAuthError.responseTooLarge(reason: "the trailer from \(host) exceeds \(HTTP1Message.maximumHeaderSize) bytes")
                    }
                }
            }
            guard body.count + size <= maximumBodySize else { throw tooLarge() }
            while buffer.count < size + 2 {
                guard try fill() else { throw OAuthError.network(reason: "\(host) closed the connection in the middle of a chunk") }
            }
            guard buffer[buffer.startIndex + size] == 0x0D, buffer[buffer.startIndex + size + 1] == 0x0A else {
                throw OAuthError.malformedResponse(reason: "a chunk from \(host) is longer than its size")
            }
            body.append(buffer.prefix(size))
            buffer = Data(buffer.dropFirst(size + 2))
        }
    }

    private mutating func line(maximum: Int) throws -> String {
        let end = Data(HTTP1Message.lineBreak.utf8)
        while true {
            if let range = buffer.firstRange(of: end) {
                let line = buffer[buffer.startIndex..<range.lowerBound]
                buffer = Data(buffer[range.upperBound...])
                return String(decoding: line, as: UTF8.self)
            }
            guard buffer.count <= maximum else {
                throw OAuthError.malformedResponse(reason: "a line longer than \(maximum) bytes in the response from \(host)")
            }
            guard try fill() else { throw OAuthError.network(reason: "\(host) closed the connection in the middle of a chunked body") }
        }
    }

    /// Appends what the server sends next; false at the end of the stream.
    private mutating func fill() throws -> Bool {
        guard !ended else { return false }
        let data = try receive()
        if data.isEmpty {
            ended = true
            return false
        }
        buffer.append(data)
        return true
    }

    private func tooLarge() -> OAuthError {
        OAuthError.responseTooLarge(reason: "response from \(host) exceeds \(maximumBodySize) bytes")
    }
}
