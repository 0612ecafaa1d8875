import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// HTTP/1.1 to chromedriver over a plain socket, one request per connection. Not
/// URLSession: chromedriver writes header fields without a space after the colon
/// (`Content-Length:249`), which swift-corelibs-foundation's header parser refuses
/// ("Failed writing header"), while RFC 9112 §5.1 allows it.
enum WebDriverWire {
    struct Answer: Sendable {
        var status: Int
        var body: Data
    }

    /// `method path` with `body` (JSON) to 127.0.0.1:`port`; blocking, so it runs on a
    /// thread of its own (``Blocking``).
    static func exchange(port: Int, method: String, path: String, body: Data?, timeout: TimeInterval) async throws -> Answer {
        let result: Result<Answer, TestSupportError> = await Blocking.run {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { return .failure(TestSupportError("socket() failed")) }
            defer { close(descriptor) }
            var wait = timeval(tv_sec: Int(timeout), tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { return .failure(TestSupportError("cannot connect to chromedriver on port \(port)")) }
            var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
            let payload = body ?? Data()
            if body != nil { head += "Content-Type: application/json; charset=utf-8\r\n" }
            head += "Content-Length: \(payload.count)\r\n\r\n"
            let request = Data(head.utf8) + payload
            let sent = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent == request.count else { return .failure(TestSupportError("chromedriver closed the connection")) }
            // chromedriver keeps the connection open whatever `Connection: close` says: the
            // body ends at its Content-Length.
            var response = Data()
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var split: Range<Data.Index>?
            var expected: Int?
            while true {
                if split == nil, let found = response.range(of: Data("\r\n\r\n".utf8)) {
                    split = found
                    let head = String(decoding: response[..<found.lowerBound], as: UTF8.self)
                    for line in head.split(separator: "\r\n") {
                        let parts = line.split(separator: ":", maxSplits: 1)
                        if parts.count == 2, parts[0].lowercased() == "content-length" {
                            expected = Int(parts[1].trimmingCharacters(in: .whitespaces))
                        }
                    }
                }
                if let split, let expected, response.count - split.upperBound >= expected { break }
                let count = recv(descriptor, &buffer, buffer.count, 0)
                if count <= 0 { break }
                response.append(contentsOf: buffer[0..<count])
            }
            guard let split else {
                return .failure(TestSupportError("chromedriver answered no HTTP response to \(method) \(path)"))
            }
            let statusLine = String(decoding: response[..<split.lowerBound], as: UTF8.self).split(separator: "\r\n").first ?? ""
            let parts = statusLine.split(separator: " ")
            guard parts.count >= 2, let status = Int(parts[1]) else { return .failure(TestSupportError("bad status line: \(statusLine)")) }
            return .success(Answer(status: status, body: Data(response[split.upperBound...])))
        }
        return try result.get()
    }
}
