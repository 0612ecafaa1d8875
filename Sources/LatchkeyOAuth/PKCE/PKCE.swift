#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// Proof Key for Code Exchange (RFC 7636), S256 only.
///
/// `plain` (§4.2) is never used: it protects nothing if the authorization request leaks,
/// and RFC 9700 §2.1.1 says clients must use S256 when they can; Latchkey always can.
public struct PKCE: Hashable, Sendable {
    /// The code verifier (§4.1): 43-128 characters of `[A-Za-z0-9-._~]`.
    public let verifier: String
    /// `BASE64URL(SHA256(ASCII(verifier)))` (§4.2).
    public let challenge: String
    /// Always ``challengeMethod``.
    public var method: String { Self.challengeMethod }
    /// `S256`, the one `code_challenge_method` Latchkey sends and takes (RFC 7636 §4.3).
    public static let challengeMethod = "S256"

    /// A fresh pair from 32 random bytes (§4.1 recommends 32 octets, base64url-encoded: 43 characters).
    public static func generate() throws -> PKCE {
        try PKCE(verifier: Base64URL.encode(SecureRandom.bytes(count: 32)))
    }

    /// The pair for a given verifier, which must meet §4.1.
    public init(verifier: String) throws {
        try Self.validate(verifier: verifier)
        self.verifier = verifier
        challenge = Base64URL.encode(try DigestAlgorithm.sha256.hash(Data(verifier.utf8)))
    }

    /// Throws unless `verifier` is 43-128 unreserved characters (RFC 7636 §4.1).
    public static func validate(verifier: String) throws {
        let bytes = verifier.utf8
        guard (43...128).contains(bytes.count), bytes.allSatisfy(isUnreserved) else {
            throw OAuthError.invalidPKCEVerifier(reason: "a PKCE verifier is 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_', '~'")
        }
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
