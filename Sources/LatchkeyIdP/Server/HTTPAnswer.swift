import HTTPTypes
import Hummingbird
import NIOCore

/// An answer ready to write: the router's response head and its body's bytes, gathered
/// from the response's body writer (the routes answer with buffers; a streamed body is
/// collected), then encoded as one HTTP/1.1 message (RFC 9112 §4, §6) into one buffer, so
/// a connection writes it with one system call.
///
/// Framing is ours, as NIO's response encoder did it: the body is sent whole with its
/// `Content-Length`, never chunked; a status that has no content (1xx, 204, 304, RFC 9110
/// §15) carries neither `Content-Length` nor `Transfer-Encoding` nor a body; an answer to
/// `HEAD` keeps the length a `GET` would have had and sends no body (RFC 9110 §9.3.2).
/// Field names are valid and values legal by construction in Swift HTTP Types (CR, LF and
/// NUL become spaces); the reason phrase is checked here as well.
struct HTTPAnswer: Sendable {
    var head: HTTPResponse
    var body: ByteBuffer?

    static func collect(_ response: Response) async -> HTTPAnswer {
        let collected = CollectedBody()
        do {
            try await response.body.write(BodyCollector(collected: collected))
        } catch {
            return HTTPAnswer(head: HTTPResponse(status: .internalServerError), body: nil)
        }
        return HTTPAnswer(head: response.head, body: collected.buffer)
    }

    /// A bodiless answer the connection makes itself (400 for a request that does not
    /// parse), with the fields the router's answers carry.
    static func refusal(_ status: HTTPResponse.Status) -> HTTPAnswer {
        HTTPAnswer(head: HTTPResponse(status: status, headerFields: [.date: HTTPDate.now, .server: ProviderHTTPServer.serverName, .connection: "close"]), body: nil)
    }

    /// The message's bytes: status line, fields, framing, then the body unless `toHEAD`.
    func encoded(allocator: ByteBufferAllocator, toHEAD: Bool, closing: Bool) -> ByteBuffer {
        let status = head.status
        let hasContent = status.code >= 200 && status.code != 204 && status.code != 304
        let length = body?.readableBytes ?? 0
        var buffer = allocator.buffer(capacity: 256 + head.headerFields.count * 48 + (toHEAD ? 0 : length))
        buffer.writeStaticString("HTTP/1.1 ")
        buffer.writeString(String(status.code))
        buffer.writeInteger(UInt8(ascii: " "))
        Self.writeReasonPhrase(status.reasonPhrase, to: &buffer)
        buffer.writeStaticString("\r\n")
        var saidClose = false
        for field in head.headerFields {
            switch field.name {
            case .contentLength, .transferEncoding:
                continue  // framed below from the bytes actually sent
            case .connection:
                if closing {
                    saidClose = true
                    buffer.writeStaticString("Connection: close\r\n")
                    continue
                }
            default:
                break
            }
            buffer.writeString(field.name.rawName)
            buffer.writeStaticString(": ")
            buffer.writeString(field.value)
            buffer.writeStaticString("\r\n")
        }
        if closing, !saidClose { buffer.writeStaticString("Connection: close\r\n") }
        if hasContent {
            buffer.writeStaticString("Content-Length: ")
            buffer.writeString(String(length))
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("\r\n")
        if hasContent, !toHEAD, var body {
            buffer.writeBuffer(&body)
        }
        return buffer
    }

    /// RFC 9112 §4: `reason-phrase = 1*( HTAB / SP / VCHAR / obs-text )`; anything else
    /// becomes a space.
    private static func writeReasonPhrase(_ phrase: String, to buffer: inout ByteBuffer) {
        for byte in phrase.utf8 {
            buffer.writeInteger(byte == 0x09 || byte >= 0x20 && byte != 0x7F ? byte : UInt8(ascii: " "))
        }
    }
}

/// Where ``BodyCollector`` puts what it is given (the writer itself is consumed).
private final class CollectedBody {
    var buffer: ByteBuffer?
}

private struct BodyCollector: ResponseBodyWriter {
    let collected: CollectedBody

    mutating func write(_ buffer: ByteBuffer) async throws {
        if collected.buffer == nil {
            collected.buffer = buffer
        } else {
            var buffer = buffer
            collected.buffer?.writeBuffer(&buffer)
        }
    }

    /// Trailers are not sent: the answer goes out with a `Content-Length`, which has no
    /// trailer section (RFC 9112 §7.1.2), and no route sets any.
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
