import Foundation
import LatchkeyWebAuthn
import Synchronization

/// Credential public keys already parsed, by their stored COSE bytes (docs/PERFORMANCE.md,
/// "Less per request"): building the OpenSSL key from a row's coordinates and preparing
/// its verification context cost every assertion some 40 µs, a few percent of a sign-in,
/// for a key that never changes. A key is found only by exactly the bytes it was parsed
/// from, so a cached key is the key the row holds. Bounded: past ``capacity`` entries the
/// cache starts again empty, so no number of credentials grows it without limit.
enum COSEKeyCache {
    static let capacity = 4096
    private static let keys = Mutex<[Data: COSEKey]>([:])

    /// How many keys are kept now (for the bound's test).
    static var count: Int { keys.withLock { $0.count } }

    /// The key `encoded` holds, parsed once.
    static func key(_ encoded: Data) throws -> COSEKey {
        if let known = keys.withLock({ $0[encoded] }) { return known }
        let parsed = try COSEKey(encoded: encoded)
        keys.withLock { keys in
            if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
            keys[encoded] = parsed
        }
        return parsed
    }
}
