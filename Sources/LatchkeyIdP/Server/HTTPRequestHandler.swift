import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// The end of a connection's pipeline (``ProviderHTTPServer``): it reads one request's
/// head, body and end, runs the router on a task of its own that prefers the connection's
/// event loop, and writes the answer in one flush. NIO's `HTTPServerPipelineHandler`, in
/// front of it, holds a pipelined request back until the answer before it is written, so
/// one request is in flight at a time, in order (RFC 9112 §9.3.2).
///
/// Hummingbird's own HTTP/1.1 channel passes every part and every answer through an
/// `NIOAsyncChannel` (an async sequence in, an async writer out), served by a task the
/// server starts on the cooperative pool; with clients that open a connection per request,
/// as the command-line client does, that machinery and its thread switches cost more than a
/// bare request's own work (docs/PERFORMANCE.md, "A Go peer"). Here a request costs one
/// task, and its parts and answer stay on the loop.
///
/// The body is collected here, up to ``HTTPSupport/maximumBodySize``. A body past that, or
/// one that misses its deadline (``RequestBodyDeadlineHandler``), is not waited for: the
/// request goes to the router at once with a body that fails as it did before, so
/// ``RequestBodyMiddleware`` answers 413 or 408 as always, and the connection closes after
/// that answer.
final class HTTPRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    /// What answers a request: the router, with the answer's common fields.
    typealias Respond = @Sendable (Request, any Channel) async -> Response

    /// Why a body was not read to its end.
    struct BodyTooLarge: Error {}

    private enum Reading {
        /// Between requests.
        case idle
        /// A head has arrived; its body so far.
        case reading(HTTPRequest, ByteBuffer?)
        /// The request went to the router early; its remaining parts are dropped.
        case discarding
    }

    private let respond: Respond
    private let maximumBodySize: Int
    private var reading = Reading.idle
    /// An answer is being made: the router's task runs.
    private var responding = false
    /// Close once the answer in progress is written: the client asked to (`Connection:
    /// close`), closed its side, or the request was cut short.
    private var closeAfterResponse = false
    private var removed = false
    private var executor: EventLoopTaskExecutor?

    init(maximumBodySize: Int, respond: @escaping Respond) {
        self.maximumBodySize = maximumBodySize
        self.respond = respond
    }

    func handlerAdded(context: ChannelHandlerContext) {
        executor = EventLoopTaskExecutor(context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        removed = true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            reading = .reading(head, nil)
        case .body(let part):
            guard case .reading(let head, var body) = reading else { return }
            reading = .discarding  // while `body` is changed, so it is not copied
            if (body?.readableBytes ?? 0) + part.readableBytes > maximumBodySize {
                dispatch(head, body: RequestBody(asyncSequence: FailingBody(error: BodyTooLarge())), early: true, context: context)
                return
            }
            if body == nil {
                body = part
            } else {
                var part = part
                body?.writeBuffer(&part)
            }
            reading = .reading(head, body)
        case .end:
            switch reading {
            case .reading(let head, let body):
                reading = .idle
                dispatch(head, body: RequestBody(buffer: body ?? ByteBuffer()), early: false, context: context)
            case .discarding, .idle:
                reading = .idle
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case let expired as RequestBodyDeadlineHandler.Expired:
            switch reading {
            case .reading(let head, _):
                dispatch(head, body: RequestBody(asyncSequence: FailingBody(error: expired)), early: true, context: context)
            case .discarding:
                // A body answered early (413) and still arriving at its deadline: reading
                // and dropping it ends here.
                context.close(promise: nil)
            case .idle:
                break
            }
        case is HTTPParserError:
            // As Hummingbird answers a request it cannot parse: 400, then the connection ends.
            guard !responding else {
                context.close(promise: nil)
                return
            }
            let head = HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        default:
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client closed its side (the channel allows half closure): the answer in
        // progress is still written, then the connection ends.
        if case ChannelEvent.inputClosed = event {
            if responding {
                closeAfterResponse = true
            } else {
                context.close(promise: nil)
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Runs the router for one request on a task that prefers this connection's loop,
    /// then writes its answer there.
    private func dispatch(_ head: HTTPRequest, body: RequestBody, early: Bool, context: ChannelHandlerContext) {
        if early {
            reading = .discarding
            closeAfterResponse = true
        }
        if let connection = head.headerFields[.connection], connection.lowercased().contains("close") {
            closeAfterResponse = true
        }
        responding = true
        let request = Request(head: head, body: body)
        let channel = context.channel
        let respond = respond
        let executor = executor ?? EventLoopTaskExecutor(context.eventLoop)
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        Task(executorPreference: executor) {
            let response = await EventLoopTaskExecutor.$current.withValue(executor) { await respond(request, channel) }
            let answer = await Answer.collect(response)
            if channel.eventLoop.inEventLoop {
                bound.value.handler.write(answer, context: bound.value.context)
            } else {
                channel.eventLoop.execute { bound.value.handler.write(answer, context: bound.value.context) }
            }
        }
    }

    private func write(_ answer: Answer, context: ChannelHandlerContext) {
        responding = false
        guard !removed else { return }
        context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
        if let body = answer.body, body.readableBytes > 0 {
            context.write(wrapOutboundOut(.body(body)), promise: nil)
        }
        guard closeAfterResponse else {
            context.writeAndFlush(wrapOutboundOut(.end(answer.trailers)), promise: nil)
            return
        }
        // As Hummingbird ends a connection: its output is closed after the answer, and
        // the channel closes when the client has closed its side too (or at the idle
        // timeout).
        context.writeAndFlush(wrapOutboundOut(.end(answer.trailers))).assumeIsolated().whenComplete { _ in
            context.close(mode: .output, promise: nil)
        }
    }
}

/// An answer ready to write: the head and the body's bytes, collected from the
/// response's body writer (the routes answer with buffers; a streamed body is gathered).
private struct Answer: Sendable {
    var head: HTTPResponse
    var body: ByteBuffer?
    var trailers: HTTPFields?

    static func collect(_ response: Response) async -> Answer {
        let collected = CollectedBody()
        do {
            try await response.body.write(BodyCollector(collected: collected))
        } catch {
            return Answer(head: HTTPResponse(status: .internalServerError, headerFields: [.contentLength: "0"]), body: nil, trailers: nil)
        }
        return Answer(head: response.head, body: collected.buffer, trailers: collected.trailers)
    }
}

/// Where ``BodyCollector`` puts what it is given (the writer itself is consumed).
private final class CollectedBody {
    var buffer: ByteBuffer?
    var trailers: HTTPFields?
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

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        collected.trailers = trailingHeaders
    }
}

/// A request body that fails with `error` when read: what the router sees of a body that
/// was too large or too slow.
private struct FailingBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let error: any Error

    struct AsyncIterator: AsyncIteratorProtocol {
        let error: any Error
        mutating func next() async throws -> ByteBuffer? { throw error }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(error: error) }
}
