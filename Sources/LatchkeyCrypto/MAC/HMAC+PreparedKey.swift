#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension HMAC {
    /// An HMAC key prepared once for many codes (RFC 2104 §2): the digest is fetched and
    /// the key's inner and outer pads hashed once, and each code starts from a copy of
    /// that state. For a caller that computes many codes under one long-lived key, such as
    /// the provider's sixteen login-hint decoys per request, where preparing the key for
    /// each code cost more than the codes themselves (docs/PERFORMANCE.md, "A fifth
    /// round"). Codes equal ``HMAC/authenticationCode(for:using:digest:)``'s.
    public struct PreparedKey: Sendable {
        private let prepared: PreparedHMAC

        public init(_ key: SymmetricKey, digest: DigestAlgorithm = .sha256) throws {
            prepared = try PreparedHMAC(key: key, digest: digest)
        }

        /// The full-length authentication code of `message`.
        public func authenticationCode(for message: some DataProtocol) throws -> Data {
            try prepared.authenticationCode(for: message)
        }
    }
}
