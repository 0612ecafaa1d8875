#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Comparison of secrets (MACs, state values, PKCE challenges, codes) whose running time
/// does not depend on where the inputs differ, so an attacker timing responses learns
/// nothing about the expected value. Backed by OpenSSL's `CRYPTO_memcmp`.
public enum ConstantTime {
    /// True when `a` and `b` have the same bytes. Lengths are not secret: inputs of
    /// different length return false at once.
    public static func isEqual(_ a: some DataProtocol, _ b: some DataProtocol) -> Bool {
        guard a.count == b.count else { return false }
        return a.withContiguousBytes { x in b.withContiguousBytes { y in OpenSSLRandom.constantTimeEqual(x, y) } }
    }
}
