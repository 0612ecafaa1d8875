import Foundation
import LatchkeyCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Mail through an SMTP server (RFC 5321): `smtp://[user@]host[:port]` upgrades with
/// STARTTLS (RFC 3207) whenever the server offers it, `smtps://` speaks TLS from the first
/// byte (RFC 8314 §3.3). TLS goes through the same OpenSSL as everything else
/// (``TLSClientConnection``), verifying the server's certificate and name. A server on
/// another host that offers no STARTTLS gets nothing (a stripped STARTTLS must not put
/// codes on the network in clear); only a loopback server, a local MTA, is spoken to in
/// clear. A password (AUTH PLAIN, RFC 4616) goes only where mail may.
struct SMTPTransport: MailTransport {
    struct Settings: Sendable {
        var host: String
        var port: Int
        var implicitTLS: Bool
        var user: String?
        var password: String?
        /// Certificates to trust instead of the system's (a private CA).
        var trustedCertificatesFile: String?
        /// How long any one step (connect, a reply) may take.
        var timeout: TimeInterval = 30

        /// Parses `smtp://[user@]host[:port]` (port 25 by default; 587 is usual for
        /// submission) or `smtps://[user@]host[:port]` (465).
        init(url text: String, password: String?, trustedCertificatesFile: String? = nil) throws {
            guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), ["smtp", "smtps"].contains(scheme),
                  let host = components.host, !host.isEmpty, components.path.isEmpty || components.path == "/", components.query == nil
            else {
                throw MailError.invalidConfiguration("the SMTP URL must be smtp://[user@]host[:port] or smtps://[user@]host[:port]")
            }
            guard components.password == nil else {
                throw MailError.invalidConfiguration("the SMTP URL must not carry a password: give it by file, environment or credential")
            }
            self.host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            implicitTLS = scheme == "smtps"
            port = components.port ?? (implicitTLS ? 465 : 25)
            user = components.percentEncodedUser.flatMap { $0.removingPercentEncoding }
            self.password = password
            self.trustedCertificatesFile = trustedCertificatesFile
        }

        var isLoopback: Bool {
            LoopbackHost.contains(host)
        }
    }

    let settings: Settings

    func send(_ message: MailMessage, from: String) async throws {
        let data = try message.rendered(from: from)
        let settings = settings
        try await BlockingWork.run {
            let session = try SMTPSession(settings)
            defer { session.close() }
            try session.deliver(data, from: from, to: message.to)
        }
    }
}

/// One SMTP conversation over a blocking socket: the server's replies are bounded (a line
/// 4 KiB, a reply 64 KiB), each step has the transport's timeout.
private final class SMTPSession {
    private let settings: SMTPTransport.Settings
    private let socket: Int32
    private var tls: TLSClientConnection?
    private var buffer = Data()
    private var capabilities: Set<String> = []

    init(_ settings: SMTPTransport.Settings) throws {
        self.settings = settings
        socket = try Self.connect(settings.host, settings.port, timeout: settings.timeout)
        do {
            if settings.implicitTLS { try startTLS() }
            try expect(220, after: nil)
            try hello()
            if !settings.implicitTLS, capabilities.contains("STARTTLS") {
                try expect(220, after: "STARTTLS")
                // Anything already sent after the 220 came before TLS and would be read as
                // if inside it (the STARTTLS injection of CVE-2011-0411): refuse.
                guard buffer.isEmpty else {
                    throw MailError.temporary("\(settings.host) sent data after its STARTTLS answer; refusing it")
                }
                try startTLS()
                // What the server said before TLS is forgotten (RFC 3207 §4.2).
                capabilities = []
                try hello()
            }
            // Codes are secrets: they cross a network only inside TLS. A server on this
            // host (a local MTA) may take them in clear.
            guard tls != nil || settings.isLoopback else {
                throw MailError.temporary("\(settings.host) offers no STARTTLS; refusing to send codes or a password in clear (use smtps://, or a local MTA with --mail sendmail)")
            }
            if let user = settings.user {
                let credentials = Data("\u{0}\(user)\u{0}\(settings.password ?? "")".utf8).base64EncodedString()
                try expect(235, after: "AUTH PLAIN \(credentials)", shown: "AUTH PLAIN …")
            }
        } catch {
            Glibc.close(socket)
            throw error
        }
    }

    func close() {
        _ = try? send("QUIT")
        tls?.close()
        Glibc.close(socket)
    }

    func deliver(_ data: Data, from: String, to: String) throws {
        let utf8 = !(from + to).unicodeScalars.allSatisfy(\.isASCII)
        if utf8, !capabilities.contains("SMTPUTF8") {
            throw MailError.recipientRefused("\(settings.host) does not take non-ASCII addresses (no SMTPUTF8)")
        }
        try expect(250, after: "MAIL FROM:<\(from)>" + (utf8 ? " SMTPUTF8" : ""))
        // From here on a refusal is about this recipient or this message, not the server.
        try expect([250, 251], after: "RCPT TO:<\(to)>", concerning: .recipient)
        try expect(354, after: "DATA", concerning: .recipient)
        // Dot-stuffing (RFC 5321 §4.5.2), then the end-of-data line.
        var text = String(decoding: data, as: UTF8.self)
        if text.hasPrefix(".") { text = "." + text }
        text = text.replacingOccurrences(of: "\r\n.", with: "\r\n..")
        try write(Data(text.utf8) + Data(".\r\n".utf8))
        try expect(250, after: nil, concerning: .recipient)
    }

    // MARK: The conversation

    private func hello() throws {
        let reply = try expect(250, after: "EHLO latchkey")
        capabilities = Set(reply.dropFirst().map { line in String(line.split(separator: " ").first ?? "").uppercased() })
    }

    private func startTLS() throws {
        do {
            tls = try TLSClientConnection(socket: socket, host: settings.host, trustedCertificatesFile: settings.trustedCertificatesFile)
        } catch {
            throw MailError.temporary("TLS with \(settings.host) failed", underlying: error)
        }
    }

    /// What a refusal at some step of the conversation is about: the server and the
    /// provider's standing with it (connecting, TLS, `EHLO`, `AUTH`, `MAIL FROM`), or one
    /// recipient and message (`RCPT TO`, `DATA`, the message itself).
    private enum Concern {
        case server
        case recipient
    }

    @discardableResult
    private func expect(_ code: Int, after command: String?, shown: String? = nil, concerning concern: Concern = .server) throws -> [String] {
        try expect([code], after: command, shown: shown, concerning: concern)
    }

    /// Sends `command` (if any) and reads the reply; throws unless its code is one of
    /// `codes`: 4xx and connection trouble are temporary, 5xx final, each about the
    /// server or about the recipient as `concern` says.
    @discardableResult
    private func expect(_ codes: [Int], after command: String?, shown: String? = nil, concerning concern: Concern = .server) throws -> [String] {
        if let command { try send(command) }
        let (code, lines) = try readReply()
        guard codes.contains(code) else {
            let said = (shown ?? command.map { String($0.prefix(40)) }) ?? "connecting"
            let text = lines.joined(separator: " ").prefix(300).unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) }
            let kind: MailError.Code = switch (concern, code >= 500) {
            case (.server, false): .temporary
            case (.server, true): .rejected
            case (.recipient, false): .recipientDeferred
            case (.recipient, true): .recipientRefused
            }
            throw MailError(kind, "\(settings.host) answered \(code) to \(said): \(String(text))")
        }
        return lines
    }

    private func send(_ command: String) throws {
        try write(Data((command + "\r\n").utf8))
    }

    private func readReply() throws -> (Int, [String]) {
        var lines: [String] = []
        var size = 0
        while true {
            let line = try readLine()
            size += line.utf8.count
            guard line.utf8.count >= 3, let code = Int(line.prefix(3)), size <= 64 * 1024 else {
                throw MailError.temporary("\(settings.host) sent something that is not an SMTP reply")
            }
            lines.append(String(line.dropFirst(4)))
            if line.count == 3 || line[line.index(line.startIndex, offsetBy: 3)] == " " { return (code, lines) }
        }
    }

    private func readLine() throws -> String {
        while true {
            if let end = buffer.firstRange(of: Data("\r\n".utf8)) {
                let line = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex..<end.upperBound)
                return line
            }
            guard buffer.count <= 4096 else { throw MailError.temporary("\(settings.host) sent a line over 4 KiB") }
            let chunk = try readSome()
            guard !chunk.isEmpty else { throw MailError.temporary("\(settings.host) closed the connection") }
            buffer.append(chunk)
        }
    }

    private func readSome() throws -> Data {
        if let tls {
            do { return try tls.read() } catch { throw MailError.temporary("reading from \(settings.host) failed", underlying: error) }
        }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = recv(socket, &bytes, bytes.count, 0)
        guard count >= 0 else { throw MailError.temporary("reading from \(settings.host) failed (errno \(errno); a timeout is EAGAIN)") }
        return Data(bytes.prefix(count))
    }

    private func write(_ data: Data) throws {
        if let tls {
            do { try tls.write(data) } catch { throw MailError.temporary("writing to \(settings.host) failed", underlying: error) }
            return
        }
        var offset = 0
        while offset < data.count {
            let sent = data.withUnsafeBytes { Glibc.send(socket, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw MailError.temporary("writing to \(settings.host) failed (errno \(errno))") }
            offset += sent
        }
    }

    /// A TCP connection to `host:port`, each address tried in turn, with send and
    /// receive timeouts (on Linux the send timeout bounds `connect` too).
    private static func connect(_ host: String, _ port: Int, timeout: TimeInterval) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &results) == 0, let first = results else {
            throw MailError.temporary("cannot resolve the SMTP host \(host)")
        }
        defer { freeaddrinfo(first) }
        var time = timeval(tv_sec: Int(timeout), tv_usec: 0)
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            let descriptor = Glibc.socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard descriptor >= 0 else { continue }
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            if Glibc.connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return descriptor }
            Glibc.close(descriptor)
        }
        throw MailError.temporary("cannot connect to the SMTP server \(host):\(port)")
    }
}
