import NIOCore

/// A `TaskExecutor` that runs jobs on a SwiftNIO event loop (SE-0417): the swift-nio this
/// package pins has none of its own. Each request's task prefers its connection's loop
/// (``HTTPConnectionHandler``), so the routes, their awaits and the answer's write run where
/// the channel lives, without a thread switch between them.
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
