import HummingbirdCore
import Logging
import NIOCore

/// HTTP/1.1 whose connection task runs on the connection's own event loop
/// (docs/PERFORMANCE.md, "Persisted provider"): Hummingbird runs each connection's
/// request loop as a task on the cooperative pool, so every request woke a pool thread
/// when the event loop had read it, and every answer went back to the event loop to be
/// written, two thread switches a request (and more for each `await` in between). With
/// the event loop as the task's preferred executor, the request loop, its handlers and
/// the writes all run where the channel lives. Work that must not block the loop still
/// leaves it: SQLite's durable commit waits on a queue of its own, PostgreSQL answers on
/// its connection's loop.
struct EventLoopHTTP1Channel: ServerChildChannel {
    let base: HTTP1Channel

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        base.setup(channel: channel, logger: logger)
    }

    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        let executor = EventLoopTaskExecutor(value.channel.eventLoop)
        await withTaskExecutorPreference(executor) {
            await EventLoopTaskExecutor.$current.withValue(executor) {
                await base.handle(value: value, logger: logger)
            }
        }
    }
}

/// A `TaskExecutor` that runs jobs on a SwiftNIO event loop (SE-0417): the swift-nio this
/// package pins has none of its own.
final class EventLoopTaskExecutor: TaskExecutor {
    let eventLoop: any EventLoop

    /// The executor of the connection whose request is being served, for a task that
    /// request starts to run where it runs (an unstructured task does not inherit the
    /// preference): nil outside a request.
    @TaskLocal static var current: EventLoopTaskExecutor?

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
