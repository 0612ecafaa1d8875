import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Everything a connection of ``ProviderHTTPServer`` does after NIO's HTTP/1.1 parser, in
/// one handler: it turns each request's head into Swift HTTP Types, collects the body up
/// to ``HTTPSupport/maximumBodySize`` under its deadline, runs the router on a task that
/// prefers the connection's event loop, and writes the answer as one buffer. Pipelined
/// requests wait, in order, until the answer before them is written, and the connection
/// reads nothing more meanwhile (RFC 9112 §9.3.2). One timer per connection keeps both the
/// idle timeout and the body's deadline.
///
/// This replaced a pipeline of five handlers (NIO's pipelining handler and response
/// encoder, the conversion to HTTP Types, a deadline handler, Hummingbird's connection
/// state handler): with clients that open a connection per request, as the command-line
/// client does, each handler's context, each hop of every part through it and a second
/// timer were paid on every request (docs/PERFORMANCE.md, "A Go peer").
///
/// The rules it keeps:
/// - a body past the limit, or one that misses its deadline, is not waited for: the request
///   goes to the router at once with a body that fails (``RequestBodyMiddleware`` answers
///   413 or 408), the rest is read and dropped only until the deadline, and the connection
///   closes after that answer;
/// - a request that does not parse gets 400 and the connection closes;
/// - `Connection: close` (or HTTP/1.0 without keep-alive), a client that closed its side,
///   or a graceful shutdown ends the connection once the answer in progress is written;
///   an idle connection is closed at once on shutdown, and after the idle timeout
///   otherwise (a partial head counts as idle, so a client that never finishes one is cut
///   off too).
final class HTTPConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = Never
    typealias OutboundOut = ByteBuffer

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

    /// What arrived while an answer was being made, kept in order for after it.
    private enum Held {
        case part(HTTPServerRequestPart)
        case inputClosed
        case error(any Error)
    }

    private let respond: Respond
    private let limits: ProviderHTTPServer.Limits
    private var reading = Reading.idle
    /// The method of the request being answered (an answer to `HEAD` has no body).
    private var method = HTTPRequest.Method.get
    /// An answer is being made: the router's task runs.
    private var responding = false
    private var held = CircularBuffer<Held>(initialCapacity: 0)
    /// A read the channel asked for while an answer was being made, done after it.
    private var readPending = false
    /// Close once the answer in progress is written.
    private var closeAfterResponse = false
    /// What is still to arrive of the request being answered is to be read and dropped,
    /// so the connection closes its output first rather than at once (a close with unread
    /// bytes would send a reset that can destroy the answer, RFC 9112 §9.6).
    private var lingerAfterResponse = false
    /// The last answer is written and the output closed; what still arrives is dropped
    /// until the client closes or ``bodyDeadline`` passes.
    private var outputClosed = false
    private var quiescing = false
    private var closed = false
    private var executor: EventLoopTaskExecutor?

    /// The connection's one timer and the instant it is due.
    private var timer: Scheduled<Void>?
    private var timerDue = NIODeadline.distantFuture
    /// When the body of the request being read must have ended; nil when none is due.
    private var bodyDeadline: NIODeadline?
    /// When the connection last finished an answer (or opened).
    private var lastActive = NIODeadline.now()

    init(limits: ProviderHTTPServer.Limits, respond: @escaping Respond) {
        self.limits = limits
        self.respond = respond
    }

    func handlerAdded(context: ChannelHandlerContext) {
        executor = EventLoopTaskExecutor(context.eventLoop)
        lastActive = .now()
        // The first check comes at whichever limit is nearer, so a request with a body on
        // a fresh connection does not move the timer.
        arm(context: context, at: lastActive + min(limits.idleTimeout, limits.bodyTimeout))
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        ended()
    }

    func channelInactive(context: ChannelHandlerContext) {
        ended()
        context.fireChannelInactive()
    }

    /// The connection is gone: nothing more is written, and the timer (which holds this
    /// handler) is cancelled.
    private func ended() {
        closed = true
        timer?.cancel()
        timer = nil
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !outputClosed else { return }
        let part = unwrapInboundIn(data)
        if responding || !held.isEmpty {
            held.append(.part(part))
            return
        }
        handle(part, context: context)
    }

    private func handle(_ part: HTTPServerRequestPart, context: ChannelHandlerContext) {
        switch part {
        case .head(let head):
            let request: HTTPRequest
            do {
                request = try HTTPRequest(head, secure: false, splitCookie: false)
            } catch {
                refuse(context: context)
                return
            }
            if !head.isKeepAlive { closeAfterResponse = true }
            if RequestBodyDeadline.announcesBody(request.headerFields) {
                startBodyDeadline(context: context)
            } else {
                bodyDeadline = nil
            }
            reading = .reading(request, nil)
        case .body(let part):
            guard case .reading(let head, var body) = reading else { return }
            reading = .discarding  // while `body` is changed, so it is not copied
            if (body?.readableBytes ?? 0) + part.readableBytes > limits.maximumBodySize {
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
            bodyDeadline = nil
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
        guard !outputClosed else {
            context.close(promise: nil)
            return
        }
        if responding || !held.isEmpty {
            held.append(.error(error))
            return
        }
        handle(error, context: context)
    }

    private func handle(_ error: any Error, context: ChannelHandlerContext) {
        if error is HTTPParserError {
            refuse(context: context)
        } else {
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case ChannelEvent.inputClosed:
            // The client closed its side (the channel allows half closure): an answer in
            // progress is still written, then the connection ends.
            if (responding || !held.isEmpty) && !outputClosed {
                held.append(.inputClosed)
            } else {
                context.close(promise: nil)
            }
        case is ChannelShouldQuiesceEvent:
            quiescing = true
            if outputClosed {
                context.close(promise: nil)
            } else if responding {
                closeAfterResponse = true
            } else if case .idle = reading {
                context.close(promise: nil)
            } else {
                closeAfterResponse = true  // the request being read is answered, then the end
            }
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func read(context: ChannelHandlerContext) {
        if (responding || !held.isEmpty) && !outputClosed {
            readPending = true
        } else {
            context.read()
        }
    }

    // MARK: Answering

    /// Runs the router for one request on a task that prefers this connection's loop,
    /// then writes its answer there.
    private func dispatch(_ head: HTTPRequest, body: RequestBody, early: Bool, context: ChannelHandlerContext) {
        if early {
            reading = .discarding
            closeAfterResponse = true
            lingerAfterResponse = true
        }
        if quiescing { closeAfterResponse = true }
        responding = true
        method = head.method
        let request = Request(head: head, body: body)
        let channel = context.channel
        let respond = respond
        let executor = executor ?? EventLoopTaskExecutor(context.eventLoop)
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        Task(executorPreference: executor) {
            let response = await EventLoopTaskExecutor.$current.withValue(executor) { await respond(request, channel) }
            let answer = await HTTPAnswer.collect(response)
            if channel.eventLoop.inEventLoop {
                bound.value.handler.write(answer, context: bound.value.context)
            } else {
                channel.eventLoop.execute { bound.value.handler.write(answer, context: bound.value.context) }
            }
        }
    }

    private func write(_ answer: HTTPAnswer, context: ChannelHandlerContext) {
        responding = false
        lastActive = .now()
        guard !closed else { return }
        let bytes = answer.encoded(allocator: context.channel.allocator, toHEAD: method == .head, closing: closeAfterResponse)
        guard closeAfterResponse else {
            context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
            resumeReading(context: context)
            return
        }
        close(after: bytes, context: context)
    }

    /// Writes a last answer and ends the connection. With nothing of the request left to
    /// arrive the channel closes at once, as Go's net/http does; with a refused body still
    /// arriving its output closes first and what comes is dropped until the body's
    /// deadline (the timer) or the client's close.
    private func close(after bytes: ByteBuffer, context: ChannelHandlerContext) {
        held.removeAll()
        let linger = lingerAfterResponse
        if linger {
            outputClosed = true
            if bodyDeadline == nil {
                // The deadline already passed while the answer was made: a last grace
                // of one more deadline for the client to close.
                startBodyDeadline(context: context)
            }
        }
        context.writeAndFlush(wrapOutboundOut(bytes)).assumeIsolated().whenComplete { _ in
            if linger {
                context.close(mode: .output, promise: nil)
            } else {
                context.close(promise: nil)
            }
        }
        if linger, readPending {
            readPending = false
            context.read()
        }
    }

    /// After an answer: what arrived meanwhile is handled in order, until a request goes
    /// to the router again; then the read the channel asked for is done.
    private func resumeReading(context: ChannelHandlerContext) {
        while !responding, !closed, let next = held.popFirst() {
            switch next {
            case .part(let part):
                handle(part, context: context)
            case .error(let error):
                handle(error, context: context)
            case .inputClosed:
                context.close(promise: nil)
            }
        }
        if !responding, readPending, !closed {
            readPending = false
            context.read()
        }
    }

    /// 400 for a request that does not parse; then the connection ends, as Hummingbird's
    /// server did.
    private func refuse(context: ChannelHandlerContext) {
        reading = .discarding
        bodyDeadline = nil
        close(after: HTTPAnswer.refusal(.badRequest).encoded(allocator: context.channel.allocator, toHEAD: false, closing: true), context: context)
    }

    // MARK: The timer

    /// A body is due within the body timeout from now; the timer comes no later.
    private func startBodyDeadline(context: ChannelHandlerContext) {
        let due = NIODeadline.now() + limits.bodyTimeout
        bodyDeadline = due
        if due < timerDue { arm(context: context, at: due) }
    }

    private func arm(context: ChannelHandlerContext, at due: NIODeadline) {
        timer?.cancel()
        timerDue = due
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: due) {
            bound.value.handler.fired(context: bound.value.context)
        }
    }

    /// The timer's check, on the connection's event loop: a body past its deadline fails
    /// its request (or, when it was already answered, the connection ends); a connection
    /// idle for the idle timeout closes; otherwise the timer is set for the next instant
    /// either could be due.
    private func fired(context: ChannelHandlerContext) {
        timer = nil
        timerDue = .distantFuture
        guard !closed else { return }
        let now = NIODeadline.now()
        if outputClosed {
            // Lingering after a refused body: until its deadline, no longer.
            guard let deadline = bodyDeadline, deadline > now else {
                context.close(promise: nil)
                return
            }
            arm(context: context, at: deadline)
            return
        }
        if let deadline = bodyDeadline, deadline <= now {
            bodyDeadline = nil
            switch reading {
            case .reading(let head, _):
                dispatch(head, body: RequestBody(asyncSequence: FailingBody(error: RequestBodyDeadline.Expired())), early: true, context: context)
            case .discarding where responding:
                // The refusal (413) is still being made: it is written, and the output
                // closed, before what remains of the body is dropped for one more
                // deadline (``close(after:context:)``).
                break
            case .discarding:
                context.close(promise: nil)
                return
            case .idle:
                break
            }
        } else if !responding, held.isEmpty, case .idle = reading, now - lastActive >= limits.idleTimeout {
            context.close(promise: nil)
            return
        }
        var next = now + limits.idleTimeout
        if !responding, held.isEmpty, case .idle = reading { next = lastActive + limits.idleTimeout }
        if let deadline = bodyDeadline { next = min(next, deadline) }
        arm(context: context, at: next)
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
