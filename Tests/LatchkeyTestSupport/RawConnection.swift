import Foundation
public import LatchkeyOAuth
#if canImport(Glibc)
import Glibc
#endif

/// A plain TCP connection to the provider, for clients no HTTP library would be: ones
/// that send half a request, or one byte at a time, or come from a chosen address in
/// 127.0.0.0/8 (the tests' and the benchmark's stand-ins for distinct clients). Its
/// blocking calls run on a Dispatch thread, never on the (two-thread) cooperative pool
/// the server's tasks need.
public final class RawConnection: @unchecked Sendable {
    private let socket: Int32

    /// How a raw exchange ended.
    public enum Outcome: Error, Equatable {
        /// The server closed the connection without answering.
        case closed
        /// The server answered with this status line's code.
        case status(Int)
        /// Nothing came back within the wait.
        case silent
    }

    /// Connects to the provider on 127.0.0.1 from `source`, any address in 127.0.0.0/8, so
    /// a test can stand in for distinct clients.
    public init(port: Int, source: String = "127.0.0.1") throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Outcome.closed }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(socket)
            throw Outcome.closed
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw Outcome.closed
        }
    }

    deinit {
        close(socket)
    }

    /// Sends `text`; false once the server has closed the connection.
    public func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Closes this side for sending (a half close): the server reads the end of the stream.
    public func closeSending() {
        shutdown(socket, Int32(SHUT_WR))
    }

    /// Waits up to `seconds` for the server's answer or for it to close the connection.
    public func outcome(within seconds: Double) async -> Outcome {
        await Blocking.run { self.waitForOutcome(seconds) }
    }

    /// Sends `pieces` one after another, `interval` seconds apart, stopping when the server
    /// closes the connection or answers; then waits up to `seconds` for the outcome.
    public func trickle(_ pieces: [String], interval: Double, thenWait seconds: Double) async -> Outcome {
        await Blocking.run {
            for piece in pieces {
                guard self.send(piece) else { break }
                var descriptor = pollfd(fd: self.socket, events: Int16(POLLIN), revents: 0)
                if poll(&descriptor, 1, Int32(interval * 1000)) > 0 { break }
            }
            return self.waitForOutcome(seconds)
        }
    }

    /// Sends one whole request (`Connection: close`) and reads the answer to its end,
    /// waiting up to `seconds`: its status and body (a JSON object, or empty).
    public func exchange(
        _ method: String, _ target: String, json: JSONValue? = nil, headers: [String: String] = [:], within seconds: Double = 20
    ) async throws -> (status: Int, body: JSONValue) {
        try await exchange(method, target, body: try json.map { try $0.json() }, contentType: "application/json", headers: headers, within: seconds)
    }

    /// ``exchange(_:_:json:headers:within:)`` with a form body (`application/x-www-form-urlencoded`).
    public func exchange(
        _ method: String, _ target: String, form: [(String, String)], headers: [String: String] = [:], within seconds: Double = 20
    ) async throws -> (status: Int, body: JSONValue) {
        try await exchange(method, target, body: FormEncoding.encode(form), contentType: "application/x-www-form-urlencoded", headers: headers, within: seconds)
    }

    private func exchange(
        _ method: String, _ target: String, body: Data?, contentType: String, headers: [String: String], within seconds: Double
    ) async throws -> (status: Int, body: JSONValue) {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAccept: application/json\r\n"
        if body != nil { head += "Content-Type: \(contentType)\r\n" }
        let body = body ?? Data()
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        guard send(head + String(decoding: body, as: UTF8.self)) else { throw Outcome.closed }
        let answer = await Blocking.run { self.readToEnd(seconds) }
        guard let split = answer.range(of: Data("\r\n\r\n".utf8)) else { throw Outcome.closed }
        let headText = String(decoding: answer[..<split.lowerBound], as: UTF8.self)
        let parts = headText.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else { throw Outcome.closed }
        var payload = Data(answer[split.upperBound...])
        if headText.lowercased().contains("transfer-encoding: chunked") { payload = Self.dechunked(payload) }
        return (status, (try? JSONValue(json: payload)) ?? [:])
    }

    /// Everything the server sends until it closes the connection, or until `seconds`
    /// pass; whether it closed.
    public func received(within seconds: Double) async -> (text: String, closed: Bool) {
        await Blocking.run {
            let started = Date()
            let data = self.readToEnd(seconds)
            return (String(decoding: data, as: UTF8.self), Date().timeIntervalSince(started) < seconds - 0.05)
        }
    }

    private func readToEnd(_ seconds: Double) -> Data {
        let deadline = Date().addingTimeInterval(seconds)
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while Date() < deadline {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) > 0 else { break }
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            data.append(contentsOf: buffer.prefix(count))
        }
        return data
    }

    private static func dechunked(_ data: Data) -> Data {
        var result = Data()
        var rest = data[...]
        while let lineEnd = rest.range(of: Data("\r\n".utf8)),
              let size = Int(String(decoding: rest[..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";")[0], radix: 16), size > 0 {
            let start = lineEnd.upperBound
            guard rest.distance(from: start, to: rest.endIndex) >= size else { break }
            let end = rest.index(start, offsetBy: size)
            result.append(rest[start..<end])
            rest = rest[min(rest.index(end, offsetBy: 2, limitedBy: rest.endIndex) ?? rest.endIndex, rest.endIndex)...]
        }
        return result
    }

    private func waitForOutcome(_ seconds: Double) -> Outcome {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(seconds * 1000)) > 0 else { return .silent }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return .closed }
        let head = String(decoding: buffer.prefix(count), as: UTF8.self)
        let parts = head.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else { return .closed }
        return .status(status)
    }
}

extension RawConnection {
    /// Connects on a thread of its own: `connect` blocks when the server's accept queue is
    /// full (a flood), and must not hold one of the cooperative pool's threads meanwhile.
    public static func open(port: Int, source: String = "127.0.0.1") async throws -> RawConnection {
        try await Blocking.run { Result { try RawConnection(port: port, source: source) } }.get()
    }

    /// The `index`th stand-in client address: 127.0.1.1, 127.0.1.2, …, 127.0.1.250,
    /// 127.0.2.1, … (never 127.0.0.1, which stands for the real user).
    public static func standIn(_ index: Int) -> String {
        "127.0.\(1 + index / 250).\(1 + index % 250)"
    }

    /// `count` requests to the provider on `port`, `parallel` at a time, each over its own
    /// connection from the address `source(i)`: how many got each status (-1: no answer).
    /// The tests' and the benchmark's floods (docs/SECURITY.md, "Limits").
    public static func flood(
        port: Int, count: Int, parallel: Int = 8, from source: @escaping @Sendable (Int) -> String,
        _ request: @escaping @Sendable (Int) -> (method: String, target: String, json: JSONValue?)
    ) async -> [Int: Int] {
        await flood(count: count, parallel: parallel) { index in
            let (method, target, json) = request(index)
            return try await RawConnection.open(port: port, source: source(index)).exchange(method, target, json: json).status
        }
    }

    /// `count` runs of `exchange` (given the run's index), `parallel` at a time: how many
    /// answered each status (-1: no answer).
    public static func flood(count: Int, parallel: Int = 8, _ exchange: @escaping @Sendable (Int) async throws -> Int) async -> [Int: Int] {
        await withTaskGroup(of: Int.self) { group in
            var tally: [Int: Int] = [:]
            var next = 0
            func add() {
                let index = next
                next += 1
                group.addTask { (try? await exchange(index)) ?? -1 }
            }
            for _ in 0..<min(parallel, count) { add() }
            while let status = await group.next() {
                tally[status, default: 0] += 1
                if next < count { add() }
            }
            return tally
        }
    }
}
