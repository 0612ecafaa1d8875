#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// An importing device asking to receive the credential: what the exporter's user is shown
/// before approving (`confirm-import`).
public struct ImportRequest: Hashable, Sendable {
    /// The name the importing device gave itself.
    public var deviceName: String
    /// The importer's key fingerprint for humans: the first 80 bits of its RFC 7638
    /// thumbprint in Crockford base32, `XXXX-XXXX-XXXX-XXXX`. The exporter computes it from
    /// the key itself, so the importer's screen can show the same value to compare.
    public var fingerprint: String
    /// The full RFC 7638 JWK thumbprint (base64url SHA-256).
    public var thumbprint: String
    /// The importer's new credential ID (base64url).
    public var credentialID: String

    /// The human fingerprint of an RFC 7638 thumbprint.
    public static func fingerprint(ofThumbprint thumbprint: String) -> String {
        let bytes = (try? Base64URL.decode(thumbprint)) ?? Data()
        let symbols = Array(CrockfordBase32.encode(bytes.prefix(10)))
        return stride(from: 0, to: symbols.count, by: 4).map { String(symbols[$0..<min($0 + 4, symbols.count)]) }.joined(separator: "-")
    }
}
