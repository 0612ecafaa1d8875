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

    @Test("from an untrusted peer the headers are ignored, whatever they say")
    func untrustedPeer() {
        #expect(ForwardedFor.client(peer: "198.51.100.9", forwarded: ["for=203.0.113.1"], xForwardedFor: ["203.0.113.1"], trusted: trusted) == "198.51.100.9")
    }

    @Test("behind trusted proxies the rightmost untrusted hop is the client; spoofed hops to its left are not")
    func rightmostUntrusted() {
        // The client wrote "1.2.3.4" itself; the proxy appended the real peer 203.0.113.5.
        #expect(ForwardedFor.client(peer: "10.0.0.2", forwarded: [], xForwardedFor: ["1.2.3.4, 203.0.113.5"], trusted: trusted) == "203.0.113.5")
        #expect(ForwardedFor.client(peer: "10.0.0.2", forwarded: [], xForwardedFor: ["1.2.3.4", "203.0.113.5, 10.1.1.1"], trusted: trusted) == "203.0.113.5")
        #expect(ForwardedFor.client(peer: "10.0.0.2", forwarded: [#"for="[2001:db8::1]:4711", for=192.0.2.7;proto=https"#], xForwardedFor: ["9.9.9.9"], trusted: trusted) == "2001:db8::1")
        #expect(ForwardedFor.client(peer: "10.0.0.2", forwarded: ["for=198.51.100.3:443"], xForwardedFor: [], trusted: trusted) == "198.51.100.3")
    }

    @Test("no header, only trusted hops, or a hop that is not an address: the proxy itself is the client")
    func fallBackToPeer() {
        #expect(ForwardedFor.client(peer: "10.0.0.2", forwarded: [], xForwardedFor: [], trusted: trusted) == "10.0.0.2")
        #expect(ForwardedFor.client(peer: "10.0.0.2", forwarded: [], xForwardedFor: ["10.3.3.3"], trusted: trusted) == "10.0.0.2")
        #expect(ForwardedFor.client(peer: "10.0.0.2", forwarded: ["for=_hidden"], xForwardedFor: [], trusted: trusted) == "10.0.0.2")
        #expect(ForwardedFor.client(peer: "10.0.0.2", forwarded: [], xForwardedFor: ["203.0.113.5, not-an-address"], trusted: trusted) == "10.0.0.2")
    }
}
