@testable import LatchkeyIdP
import Testing

/// Which address a request is counted under (docs/SECURITY.md, "Trusted proxies").
@Suite("Trusted proxies and forwarded addresses")
struct TrustedProxyTests {
    let trusted = [IPNetwork("10.0.0.0/8")!, IPNetwork("fd00::/8")!, IPNetwork("192.0.2.7")!]

    @Test("CIDR networks parse and match; garbage does not parse")
    func networks() {
        #expect(IPNetwork("10.0.0.0/8")?.contains("10.200.3.4") == true)
        #expect(IPNetwork("10.0.0.0/8")?.contains("11.0.0.1") == false)
        #expect(IPNetwork("2001:db8::/32")?.contains("2001:db8:1::5") == true)
        #expect(IPNetwork("2001:db8::/32")?.contains("2001:db9::5") == false)
        #expect(IPNetwork("192.0.2.7")?.contains("192.0.2.8") == false)
        #expect(IPNetwork("0.0.0.0/0")?.contains("198.51.100.1") == true)
        for bad in ["", "10.0.0.0/33", "10.0.0/8", "example.com", "::/129", "10.0.0.0/-1", "10.0.0.0/8/8"] {
            #expect(IPNetwork(bad) == nil, "\(bad)")
        }
    }

    /// The client `ForwardedFor` finds in the `X-Forwarded-For` lines `xff` or the
    /// `Forwarded` lines `forwarded`, whichever `header` says the proxy writes.
    func client(peer: String, forwarded: [String] = [], xForwardedFor: [String] = [], header: ForwardedHeader = .xForwardedFor) -> String {
        ForwardedFor.client(peer: peer, header: header, lines: header == .forwarded ? forwarded : xForwardedFor, trusted: trusted)
    }

    @Test("from an untrusted peer the headers are ignored, whatever they say")
    func untrustedPeer() {
        #expect(client(peer: "198.51.100.9", xForwardedFor: ["203.0.113.1"]) == "198.51.100.9")
        #expect(client(peer: "198.51.100.9", forwarded: ["for=203.0.113.1"], header: .forwarded) == "198.51.100.9")
    }

    @Test("behind trusted proxies the rightmost untrusted hop is the client; spoofed hops to its left are not")
    func rightmostUntrusted() {
        // The client wrote "1.2.3.4" itself; the proxy appended the real peer 203.0.113.5.
        #expect(client(peer: "10.0.0.2", xForwardedFor: ["1.2.3.4, 203.0.113.5"]) == "203.0.113.5")
        #expect(client(peer: "10.0.0.2", xForwardedFor: ["1.2.3.4", "203.0.113.5, 10.1.1.1"]) == "203.0.113.5")
        #expect(client(peer: "10.0.0.2", forwarded: [#"for="[2001:db8::1]:4711", for=192.0.2.7;proto=https"#], header: .forwarded) == "2001:db8::1")
        #expect(client(peer: "10.0.0.2", forwarded: ["for=198.51.100.3:443"], header: .forwarded) == "198.51.100.3")
    }

    @Test("no header, only trusted hops, or a hop that is not an address: the proxy itself is the client")
    func fallBackToPeer() {
        #expect(client(peer: "10.0.0.2") == "10.0.0.2")
        #expect(client(peer: "10.0.0.2", xForwardedFor: ["10.3.3.3"]) == "10.0.0.2")
        #expect(client(peer: "10.0.0.2", forwarded: ["for=_hidden"], header: .forwarded) == "10.0.0.2")
        #expect(client(peer: "10.0.0.2", forwarded: ["proto=https"], header: .forwarded) == "10.0.0.2")
        #expect(client(peer: "10.0.0.2", xForwardedFor: ["203.0.113.5, not-an-address"]) == "10.0.0.2")
    }
}
