import Foundation
import LatchkeyCrypto

/// The `allowCredentials` a sign-in naming a `login_hint` gets (OIDC Core §3.1.2.1,
/// WebAuthn L3 §5.5): always ``count`` credential IDs in byte order, the identity's live
/// ones (its most recently used, when it has more) among stable decoys, so the list tells
/// neither whether the name exists nor how many passkeys it has (docs/SECURITY.md,
/// "Limits": enumeration).
///
/// A decoy is an HMAC, under the store's decoy key, of the name as names are compared
/// (``Username/key(_:)``) and its place: the same for every request and every instance,
/// so asking twice shows nothing moving. Its length is drawn from the lengths
/// authenticators give credential IDs (16 bytes for many platform authenticators, 32 for
/// Latchkey's own and many others, 48 and 64 for security keys), so a real ID of those
/// lengths does not stand out by its length.
enum LoginHintCredentials {
    /// IDs in every hinted list (``SignIns/maximumAllowedCredentials``).
    static let count = SignIns.maximumAllowedCredentials
    /// The lengths a decoy is drawn from, by the first byte of its MAC.
    static let decoyLengths = [16, 32, 32, 48, 64]

    /// `live` (most recently used first) cut to ``count``, filled up with the decoys of the
    /// name `name` (already ``Username/key(_:)``), sorted. Every decoy is computed whatever
    /// `live` holds, so the work does not depend on it either.
    static func list(name: String, live: [Data], key: HMAC.PreparedKey) throws -> [Data] {
        let decoys = try (0..<count).map { try decoy(name: name, index: $0, key: key) }
        let real = Array(live.prefix(count))
        return (real + decoys.prefix(count - real.count)).sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The `index`th decoy ID for the name `name` (already ``Username/key(_:)``), under the
    /// decoy key prepared once for the process.
    static func decoy(name: String, index: Int, key: HMAC.PreparedKey) throws -> Data {
        let label = "login_hint:\(name):\(index)"
        let first = try key.authenticationCode(for: Data((label + ":0").utf8))
        let length = decoyLengths[Int(first[first.startIndex]) % decoyLengths.count]
        var bytes = first
        var block = 1
        while bytes.count < length {
            bytes += try key.authenticationCode(for: Data((label + ":\(block)").utf8))
            block += 1
        }
        return Data(bytes.prefix(length))
    }
}
