import Foundation
@testable import LatchkeyOAuth
import Testing

/// HTTP/1.1 as `HTTP1Transport` reads and writes it (RFC 9112): a server's answer is hostile
/// until framed, so every ambiguity a smuggling or a flood could use is refused by name,
/// and a request field cannot carry a line break into the request.
@Suite("HTTP/1.1 messages: the response's framing, the request's fields")
struct HTTP1MessageTests {
    /// Reads `text` as a server's whole answer, delivered `piece` bytes at a time.
    static func read(_ text: String, method: String = "GET", maximumBodySize: Int = 1 << 20, piece: Int = 7) throws -> TransportResponse {
        var remaining = Data(text.utf8)
        var reader = HTTP1ResponseReader(host: "server.test", maximumBodySize: maximumBodySize) {
            let next = remaining.prefix(piece)
            remaining = Data(remaining.dropFirst(piece))
            return Data(next)
        }
        return try reader.response(method: method)
    }

    static func code(_ text: String, maximumBodySize: Int = 1 << 20) -> OAuthError.Code? {
        do {
            _ = try read(text, maximumBodySize: maximumBodySize)
            return nil
        } catch let error as OAuthError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test("Content-Length, chunked (extensions and trailers), and the end of the stream frame a body; 1xx is skipped; HEAD and 204 have none")
    func framing() throws {
        let sized = try Self.read("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}ignored")
        #expect(sized.status == 200 && String(decoding: sized.body, as: UTF8.self) == "{\"a\":1}")
        #expect(sized.headers["content-type"] == "application/json")
        let chunked = try Self.read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n")
        #expect(String(decoding: chunked.body, as: UTF8.self) == "abcde")
        let closed = try Self.read("HTTP/1.0 200 OK\r\n\r\nuntil the end")
        #expect(String(decoding: closed.body, as: UTF8.self) == "until the end")
        let interim = try Self.read("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
        #expect(interim.status == 201)
        #expect(try Self.read("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", method: "HEAD").body.isEmpty)
        #expect(try Self.read("HTTP/1.1 204 No Content\r\n\r\n").body.isEmpty)
        let repeated = try Self.read("HTTP/1.1 200 OK\r\nVary: a\r\nVary: b\r\nContent-Length: 0\r\n\r\n")
        #expect(repeated.headers["vary"] == "a, b")
    }

    @Test("ambiguous or malformed framing is refused: both lengths, two lengths, a sign, another coding, a bad chunk, folding, no status line")
    func ambiguity() {
        let cases: [(String, String, OAuthError.Code)] = [
            ("Transfer-Encoding and Content-Length", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n", .malformedResponse),
            ("two Content-Lengths that differ", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", .malformedResponse),
            ("a signed Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: +3\r\n\r\nabc", .malformedResponse),
            ("a gzip transfer coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", .malformedResponse),
            ("a chunk size that is not hexadecimal", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", .malformedResponse),
            ("a chunk longer than its size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", .malformedResponse),
            ("obsolete line folding", "HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\nContent-Length: 0\r\n\r\n", .malformedResponse),
            ("a field name with a space", "HTTP/1.1 200 OK\r\nX A: 1\r\nContent-Length: 0\r\n\r\n", .malformedResponse),
            ("no status line", "SSH-2.0-OpenSSH_9.2\r\n\r\n", .malformedResponse),
            ("a status out of range", "HTTP/1.1 999 Nope\r\nContent-Length: 0\r\n\r\n", .malformedResponse),
            ("a body cut short", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", .network),
            ("nothing at all", "", .network),
        ]
        for (name, text, expected) in cases {
            #expect(Self.code(text) == expected, "\(name)")
        }
    }

    @Test("sizes are bounded: a 3 MB Content-Length is refused before any of it is read; a chunked or unframed body past the cap; a 64 KiB head")
    func bounds() {
        #expect(Self.code("HTTP/1.1 200 OK\r\nContent-Length: 3000000\r\n\r\n", maximumBodySize: 1 << 20) == .responseTooLarge)
        #expect(Self.code("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n") == .malformedResponse)
        let chunk = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + String(repeating: "400\r\n" + String(repeating: "a", count: 1024) + "\r\n", count: 3) + "0\r\n\r\n"
        #expect(Self.code(chunk, maximumBodySize: 2048) == .responseTooLarge)
        #expect(Self.code("HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "a", count: 5000), maximumBodySize: 4096) == .responseTooLarge)
        let head = "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Pad: " + String(repeating: "p", count: 1000) + "\r\n", count: 70)
        #expect(Self.code(head) == .responseTooLarge)
        let hugeChunkLine = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "e", count: 5000) + "\r\na\r\n0\r\n\r\n"
        #expect(Self.code(hugeChunkLine) == .malformedResponse)
    }

    @Test("a request field holding CR or LF, or a method that is no token, is refused before anything is sent; Host and Content-Length are the transport's")
    func requestFields() throws {
        let url = try #require(URL(string: "http://127.0.0.1:8080/token?x=1"))
        for headers in [["X-A": "1\r\nInjected: yes"], ["X-A": "1\nGET / HTTP/1.1"], ["X A": "1"], ["X-A": "nul\u{0}"]] {
            #expect(throws: OAuthError.self, "\(headers)") { try HTTP1Message.request(TransportRequest(method: "GET", url: url, headers: headers), userAgent: "t") }
        }
        #expect(throws: OAuthError.self) { try HTTP1Message.request(TransportRequest(method: "GET /x HTTP/1.1\r\n", url: url), userAgent: "t") }
        let bytes = try HTTP1Message.request(
            TransportRequest(method: "POST", url: url, headers: ["Host": "evil.test", "Content-Length": "999", "Content-Type": "text/plain"], body: Data("abc".utf8)),
            userAgent: "t"
        )
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("POST /token?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"), "\(text)")
        #expect(text.contains("Content-Length: 3\r\n") && !text.contains("999") && !text.contains("evil.test"), "\(text)")
        #expect(text.hasSuffix("Connection: close\r\n\r\nabc"), "\(text)")
    }
}
