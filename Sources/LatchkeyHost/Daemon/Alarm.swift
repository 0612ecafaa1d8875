import Synchronization

/// The daemon's wait between syncs: ends when its time is up or when ``ring()`` is
/// called (`latchkey host sync --now`), whichever comes first. A ring while no one waits
/// ends the next wait at once, so a request is never lost between two waits.
final class Alarm: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var generation = 0
        var pending = false
    }

    private let state = Mutex(State())

    func wait(for duration: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let generation: Int? = state.withLock { state in
                if state.pending {
                    state.pending = false
                    return nil
                }
                state.generation += 1
                state.continuation = continuation
                return state.generation
            }
            guard let generation else { return continuation.resume() }
            Task { [self] in
                try? await Task.sleep(for: duration)
                resume(generation: generation)
            }
        }
    }

    func ring() {
        let continuation = state.withLock { state in
            let waiting = state.continuation
            state.continuation = nil
            if waiting == nil { state.pending = true }
            return waiting
        }
        continuation?.resume()
    }

    private func resume(generation: Int) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.generation == generation else { return nil }
            let waiting = state.continuation
            state.continuation = nil
            return waiting
        }
        continuation?.resume()
    }
}
