import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The request body's deadline, kept in the connection's pipeline: a request whose head
/// announces a body (a `Content-Length` other than 0, or a `Transfer-Encoding`) must
/// deliver its end within `timeout` of its head, or the request's part stream fails with
/// ``Expired``, which ``RequestBodyMiddleware`` answers with 408 (and Hummingbird then
/// closes the connection). A client that trickles a body byte by byte would otherwise
/// hold its connection and a task for as long as it likes: the idle timeout only needs one
/// byte now and then.
///
/// One timer per connection, not one per request: a `POST` records its deadline, and
/// its end clears it. The timer, armed by the first request with a body, checks the
/// deadline when it fires: none (the body arrived) lets it lapse, a later one (a newer
/// request's) sets it again for then, a passed one fails the request. Scheduling and
/// cancelling a timer on every sign-in request (a task, a promise, the event loop's
/// heap under its lock) showed in profiles (docs/PERFORMANCE.md, "Less per request");
/// a deadline in a field costs a clock read. A body is still cut off exactly `timeout`
/// after its head.
final class RequestBodyDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    /// What the request's part stream fails with when its body is late.
    struct Expired: Error {}

    let timeout: TimeAmount
    /// When the body of the request being read must have ended; nil when no body is due.
    private var deadline: NIODeadline?
    /// The connection's timer, while one is armed.
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if Self.announcesBody(head.headerFields) {
                let due = NIODeadline.now() + timeout
                deadline = due
                if timer == nil { arm(context: context, at: due) }
            } else {
                deadline = nil
            }
        case .end:
            deadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    private func arm(context: ChannelHandlerContext, at due: NIODeadline) {
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: due) {
            bound.value.handler.fired(context: bound.value.context)
        }
    }

    /// The timer's check, on the connection's event loop.
    private func fired(context: ChannelHandlerContext) {
        timer = nil
        guard let deadline else { return }
        if deadline <= NIODeadline.now() {
            self.deadline = nil
            context.fireErrorCaught(Expired())
        } else {
            arm(context: context, at: deadline)
        }
    }

    private func disarm() {
        timer?.cancel()
        timer = nil
        deadline = nil
    }
    /// Whether an HTTP/1.1 request with these fields has a body (RFC 9112 §6.3): without
    /// `Content-Length` or `Transfer-Encoding` it has none, so most `GET`s arm nothing.
    /// One walk over the fields: their subscript joins every value of a name into a new
    /// string, twice a request here and twice in ``RequestBodyMiddleware``. (NIO's parser
    /// has already refused conflicting lengths.)
    static func announcesBody(_ fields: HTTPFields) -> Bool {
        for field in fields {
            if field.name == .transferEncoding { return true }
            if field.name == .contentLength, field.value != "0" { return true }
        }
        return false
    }
}
