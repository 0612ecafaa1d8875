import Synchronization

/// How many in-process providers the suite runs at once. Swift Testing starts every test
/// together, and each provider test holds a listener, both ends of its HTTP connections,
/// its store's files or PostgreSQL connections, and a share of two cores: unbounded, the
/// start of a full run held about 1,980 descriptors (about 585 with the slots) (past a 1,024 open-file limit, which
/// a hard limit can keep the suite from raising) and ran about 180 providers on two
/// cores, which is how a test's waits ran out on a loaded machine (issue 49). A test
/// waits for a slot before its provider starts; one that already holds a slot (a provider
/// started inside another's body) does not wait again.
enum ProviderSlots {
    static let count = 16

    @TaskLocal private static var held = false
    private static let state = Mutex<Slots>(Slots(free: count))

    private struct Slots: ~Copyable {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    /// Runs `body` holding a slot.
    static func withSlot<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        if held { return try await body() }
        await acquire()
        defer { release() }
        return try await $held.withValue(true) { try await body() }
    }

    private static func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { slots -> Bool in
                if slots.free > 0 {
                    slots.free -= 1
                    return true
                }
                slots.waiting.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    private static func release() {
        let next = state.withLock { slots -> CheckedContinuation<Void, Never>? in
            guard !slots.waiting.isEmpty else {
                slots.free += 1
                return nil
            }
            return slots.waiting.removeFirst()
        }
        next?.resume()
    }
}
