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
/// A timer on the connection's event loop, armed at the head and cancelled at the end,
/// where the deadline used to be a task per `POST` that read the body while a timer
/// cancelled it: a task's creation, its hop and its cancellation handler on every sign-in
/// request (docs/PERFORMANCE.md, "Less per request").
final class RequestBodyDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    /// What the request's part stream fails with when its body is late.
    struct Expired: Error {}

    let timeout: TimeAmount
    /// The armed deadline of the request being read, if it has a body.
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            disarm()
            if Self.announcesBody(head.headerFields) {
                let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
                deadline = context.eventLoop.scheduleTask(in: timeout) {
                    bound.value.fireErrorCaught(Expired())
                }
            }
        case .end:
            disarm()
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

    private func disarm() {
        deadline?.cancel()
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
