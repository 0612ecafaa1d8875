import Foundation
import LatchkeyOAuth
import LatchkeyTestSupport
import Synchronization
import Testing

/// The benchmark's clients connect from many loopback addresses, as a provider's clients
/// come from many hosts (``HTTP1Transport/init(policy:sourceAddress:)``): each connection
/// comes from the address asked for, and a transport made without one is left to the
/// kernel.
@Suite("HTTP transport source addresses")
struct TransportSourceAddressTests {
    @Test("each connection comes from the address the transport names for it; without one, from 127.0.0.1")
    func sourceAddress() async throws {
        let listener = try SilentListener()
        var policy = TransportPolicy()
        policy.timeout = 0.3
        let addresses = ["127.9.8.7", "127.9.8.8"]
        let next = Counter()
        let transport = HTTP1Transport(policy: policy) { addresses[next.increment() % addresses.count] }
        for _ in 0..<2 {
            _ = try? await transport.send(TransportRequest(method: "GET", url: listener.url))
        }
        _ = try? await HTTP1Transport(policy: policy).send(TransportRequest(method: "GET", url: listener.url))
        #expect(listener.connectionSources() == addresses + ["127.0.0.1"])
    }

    @Test("a source address that is not an IPv4 address fails the request instead of connecting from elsewhere")
    func invalidSource() async throws {
        let listener = try SilentListener()
        let transport = HTTP1Transport { "not an address" }
        await #expect(throws: OAuthError.self) {
            _ = try await transport.send(TransportRequest(method: "GET", url: listener.url))
        }
        #expect(listener.connectionsMade() == 0)
    }
}

private final class Counter: Sendable {
    private let value = Mutex(0)

    func increment() -> Int {
        value.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}
