/// A running completion-handler operation, to cancel it.
public struct EmbeddedTask: Sendable {
    private let task: Task<Void, Never>

    init(_ task: Task<Void, Never>) {
        self.task = task
    }

    /// Cancels the operation. Its completion handler is still called, once, with
    /// ``LatchkeyError/Code/cancelled`` unless the operation had already finished.
    public func cancel() {
        task.cancel()
    }
}
