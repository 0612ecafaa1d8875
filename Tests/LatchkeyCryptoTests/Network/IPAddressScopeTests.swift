import LatchkeyCrypto
import Testing

/// ``IPAddressScope``: the addresses a server fetching a stranger's URL may connect to.
@Suite("Network: public and special-use addresses")
struct IPAddressScopeTests {
    @Test("globally reachable unicast addresses are public", arguments: [
        "1.1.1.1", "8.8.8.8", "93.184.216.34", "192.0.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "2a00:1450:4001:81b::200e",
    ])
    func isPublic(address: String) throws {
        #expect(IPAddressScope.isPublic(try #require(IPAddress.bytes(address))))
    }

    @Test("loopback, private, shared, link-local, documentation, multicast, reserved and IPv4-in-IPv6 forms are not", arguments: [
        "0.0.0.0", "0.1.2.3", "10.0.0.1", "100.64.0.1", "100.127.255.255", "127.0.0.1", "127.255.0.1", "169.254.169.254", "172.16.0.1",
        "172.31.255.255", "192.0.0.8", "192.0.2.1", "192.88.99.1", "192.168.1.1", "198.18.0.1", "198.19.255.255", "198.51.100.1",
        "203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
        "::", "::1", "::ffff:127.0.0.1", "::ffff:8.8.8.8", "::127.0.0.1", "64:ff9b::7f00:1", "64:ff9b:1::1", "100::1", "2001::1",
        "2001:db8::1", "2002:7f00:1::1", "3fff::1", "fc00::1", "fd12:3456::1", "fe80::1", "fec0::1", "ff02::1", "4000::1",
    ])
    func isNotPublic(address: String) throws {
        #expect(!IPAddressScope.isPublic(try #require(IPAddress.bytes(address))))
    }
}
