import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyWebAuthn
import Testing

/// The parsed-key cache (docs/PERFORMANCE.md, "Less per request") is filled by whoever
/// registers credentials: it must give back exactly the key the bytes hold, refuse what
/// does not parse, and stay bounded however many keys pass through it.
@Suite("Provider: the cache of parsed credential keys")
struct COSEKeyCacheTests {
    @Test("a cached key is the key of exactly those bytes; garbage is refused; more distinct keys than its capacity never grow it past it")
    func boundedAndExact() throws {
        let first = try COSEKey(SigningKey.generate(.es256).publicKey)
        let second = try COSEKey(SigningKey.generate(.es256).publicKey)
        #expect(try COSEKeyCache.key(first.encoded) == first)
        #expect(try COSEKeyCache.key(second.encoded) == second)
        #expect(try COSEKeyCache.key(first.encoded) == first, "cached, still the same key")
        #expect(throws: (any Error).self) { try COSEKeyCache.key(Data([0xA1, 0x01, 0x02])) }
        // As many fresh keys as the capacity and one more (Ed25519 keys are the cheapest
        // to make): the cache starts again rather than grow.
        for _ in 0...COSEKeyCache.capacity {
            _ = try COSEKeyCache.key(try COSEKey(SigningKey.generate(.ed25519).publicKey).encoded)
            #expect(COSEKeyCache.count <= COSEKeyCache.capacity)
        }
    }
}
