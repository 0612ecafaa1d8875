import Foundation
import LatchkeyOAuth
import LatchkeyTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix

/// SwiftNIO with nothing of Latchkey's on it: NIO's HTTP/1.1 request parser (llhttp) and
/// one handler that writes a fixed `200` and closes when the client asked to, on NIO's
/// event loops (one per core, as `latchkey serve`). The Go peer benchmark measures its
/// four bare requests beside `latchkey serve`'s and the peer's, so the report can tell the
/// cost SwiftNIO brings from the cost Latchkey's own request path adds (issue 77,
/// docs/PERFORMANCE.md "A Go peer").
///
/// It runs as a process of its own, `latchkey-bench --bare-http-server`, so its CPU is
/// read from /proc like the other servers'. It listens on loopback only and answers every
/// path the same.
enum BareHTTPServer {
    /// The argument that makes `latchkey-bench` this server instead of a benchmark run.
    static let argument = "--bare-http-server"

    /// Listens on a free loopback port, prints `{"issuer":"http://127.0.0.1:PORT"}` and
    /// serves until the process is stopped.
    static func run() throws -> Never {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                    try pipeline.addHandler(FixedAnswer())
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .wait()
        let port = channel.localAddress?.port ?? 0
        FileHandle.standardOutput.write(Data("{\"issuer\":\"http://127.0.0.1:\(port)\"}\n".utf8))
        try channel.closeFuture.wait()
        exit(0)
    }

    /// Starts this server as a child of the benchmark and waits for its issuer line.
    static func start() throws -> ServeProcess {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let output = Pipe()
        let process = try SpawnedProcess(executable, [argument], stdout: .pipe(output))
        return try ServeProcess.ready(process, output: output, name: "the bare SwiftNIO server").server
    }

    /// Answers each request with the same small JSON body once the request has ended.
    private final class FixedAnswer: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = ByteBuffer

        private var keepAlive = true

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                keepAlive = head.isKeepAlive
            case .body:
                break
            case .end:
                var buffer = context.channel.allocator.buffer(capacity: 128)
                buffer.writeStaticString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n")
                buffer.writeStaticString(keepAlive ? "\r\n" : "Connection: close\r\n\r\n")
                buffer.writeStaticString("{\"status\":\"ok\"}")
                let closing = !keepAlive
                context.writeAndFlush(wrapOutboundOut(buffer)).assumeIsolated().whenComplete { _ in
                    if closing { context.close(promise: nil) }
                }
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
