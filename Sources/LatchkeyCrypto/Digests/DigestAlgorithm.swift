#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The SHA-2 digests (FIPS 180-4) Latchkey uses: SHA-256 everywhere (PKCE, WebAuthn,
/// JOSE), SHA-384 and SHA-512 for completeness of ID-token hash claims.
public struct DigestAlgorithm: Hashable, Sendable, CustomStringConvertible {
    enum Backing: Hashable, Sendable {
        case sha256
        case sha384
        case sha512
    }

    let backing: Backing

    private init(_ backing: Backing) {
        self.backing = backing
    }

    public static let sha256 = DigestAlgorithm(.sha256)
    public static let sha384 = DigestAlgorithm(.sha384)
    public static let sha512 = DigestAlgorithm(.sha512)

    /// The digest length in bytes.
    public var byteCount: Int {
        switch backing {
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    public var description: String {
        switch backing {
        case .sha256: "SHA-256"
        case .sha384: "SHA-384"
        case .sha512: "SHA-512"
        }
    }

    /// OpenSSL's name for the algorithm.
    var openSSLName: String {
        switch backing {
        case .sha256: "SHA2-256"
        case .sha384: "SHA2-384"
        case .sha512: "SHA2-512"
        }
    }

    var fetched: FetchedAlgorithm {
        switch backing {
        case .sha256: FetchedAlgorithms.sha256
        case .sha384: FetchedAlgorithms.sha384
        case .sha512: FetchedAlgorithms.sha512
        }
    }

    /// The digest of `data`. Throws only if OpenSSL cannot run at all (no memory, no
    /// provider).
    public func hash(_ data: some DataProtocol) throws -> Data {
        try OpenSSLDigest.hash(data, with: fetched, byteCount: byteCount)
    }
}
