import LatchkeyCrypto
import Synchronization

/// A small map that starts over when full: for values that are cheap to recompute and
/// that strangers may add (a flood of made-up keys or URLs costs them a parse each and
/// this cache its contents, nothing more).
final class BoundedCache<Value: Sendable>: Sendable {
    private let capacity: Int
    private let entries = Mutex<[String: Value]>([:])

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The value for `key`, made by `make` (and kept) when absent; nil from `make` is
    /// not kept.
    func value(_ key: String, make: () throws -> Value?) rethrows -> Value? {
        if let known = entries.withLock({ $0[key] }) { return known }
        guard let made = try make() else { return nil }
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll() }
            entries[key] = made
        }
        return made
    }
}

/// Public keys of proofs, imported once: by `kty`, `crv`, `x` and `y` as sent, with their
/// RFC 7638 thumbprints.
struct DPoPKeyCache: Sendable {
    private let keys = BoundedCache<(VerifyingKey, String)>(capacity: 1024)

    func key(_ members: [String: JSONValue]) -> (VerifyingKey, String)? {
        guard let kty = members["kty"]?.stringValue, let crv = members["crv"]?.stringValue, let x = members["x"]?.stringValue else { return nil }
        let y = members["y"]?.stringValue
        return keys.value([kty, crv, x, y ?? ""].joined(separator: "\u{0}")) {
            let jwk = JSONWebKey(kty: kty, crv: crv, x: x, y: y)
            guard let key = try? VerifyingKey(jwk: jwk), let thumbprint = try? jwk.thumbprint() else { return nil }
            return (key, thumbprint)
        }
    }
}

/// The normal form of request URLs and `htu`s seen (only those that parse are kept).
struct DPoPTargetCache: Sendable {
    private let targets = BoundedCache<DPoPTarget>(capacity: 256)

    func target(_ text: String) throws -> DPoPTarget {
        // A text that does not parse throws and is not kept.
        guard let target = try targets.value(text, make: { try DPoPTarget(text) }) else {
            throw OAuthError.invalidDPoPProof(reason: "htu: not a URL")
        }
        return target
    }
}
