/// A signature algorithm a device key can use.
///
/// The set is open-ended (a struct, not an enum), so adding an algorithm is not a
/// breaking change. Names follow JOSE (RFC 7518 §3.1, RFC 8037 §3.1) and the numbers
/// follow COSE (RFC 9053 §2.1, §2.2), which is how WebAuthn names them.
public struct SigningAlgorithm: Hashable, Sendable, CustomStringConvertible {
    enum Backing: Hashable, Sendable {
        case es256
        case ed25519
    }

    let backing: Backing

    private init(_ backing: Backing) {
        self.backing = backing
    }

    /// ECDSA on P-256 with SHA-256 (JOSE `ES256`, COSE −7). Signatures are ASN.1 DER.
    public static let es256 = SigningAlgorithm(.es256)
    /// Ed25519, PureEdDSA (RFC 8032 §5.1; JOSE `EdDSA`, COSE −8). Signatures are 64 bytes.
    public static let ed25519 = SigningAlgorithm(.ed25519)

    /// Every algorithm this version supports.
    public static let allCases: [SigningAlgorithm] = [.es256, .ed25519]

    /// The JOSE `alg` value.
    public var joseName: String {
        switch backing {
        case .es256: "ES256"
        case .ed25519: "EdDSA"
        }
    }

    /// The COSE algorithm identifier (what WebAuthn's `alg` carries).
    public var coseIdentifier: Int {
        switch backing {
        case .es256: -7
        case .ed25519: -8
        }
    }

    /// The algorithm with this JOSE `alg` value, if supported.
    public init?(joseName: String) {
        guard let match = Self.allCases.first(where: { $0.joseName == joseName }) else { return nil }
        self = match
    }

    /// The algorithm with this COSE identifier, if supported.
    public init?(coseIdentifier: Int) {
        guard let match = Self.allCases.first(where: { $0.coseIdentifier == coseIdentifier }) else { return nil }
        self = match
    }

    public var description: String { joseName }

    /// The digest applied before signing; nil for Ed25519, which hashes internally.
    var digest: DigestAlgorithm? {
        switch backing {
        case .es256: .sha256
        case .ed25519: nil
        }
    }
}

extension SigningAlgorithm: Codable {
    /// Encoded as the JOSE name, so stored records stay readable.
    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let algorithm = SigningAlgorithm(joseName: name) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unsupported signing algorithm"))
        }
        self = algorithm
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(joseName)
    }
}
