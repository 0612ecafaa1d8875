#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// Fans flow events out to every subscriber of ``Embedded/events()``. A slow subscriber
/// keeps only the newest events (bounded buffer), so it never holds a flow up.
final class FlowEventHub: Sendable {
    private let subscribers = Mutex<[UUID: AsyncStream<FlowEvent>.Continuation]>([:])
    static let bufferSize = 256

    func subscribe() -> AsyncStream<FlowEvent> {
        let (stream, continuation) = AsyncStream<FlowEvent>.makeStream(bufferingPolicy: .bufferingNewest(Self.bufferSize))
        let id = UUID()
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    func publish(_ event: FlowEvent) {
        let current = subscribers.withLock { Array($0.values) }
        for continuation in current { continuation.yield(event) }
    }

    deinit {
        let current = subscribers.withLock { Array($0.values) }
        for continuation in current { continuation.finish() }
    }
}
