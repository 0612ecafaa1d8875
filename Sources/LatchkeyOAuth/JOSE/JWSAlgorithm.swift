import LatchkeyCrypto

/// The JWS algorithms Latchkey accepts (RFC 7518 §3.1, RFC 8037 §3.1): an allow-list, not a
/// deny-list. `none`, every HMAC algorithm (`HS*`, whose "key" would be a public key an
/// attacker knows) and anything unknown have no value here, so they cannot be chosen.
public struct JWSAlgorithm: Hashable, Sendable, CustomStringConvertible {
    public let name: String

    private init(_ name: String) {
        self.name = name
    }

    public static let es256 = JWSAlgorithm("ES256")
    public static let edDSA = JWSAlgorithm("EdDSA")
    public static let rs256 = JWSAlgorithm("RS256")
    public static let all: [JWSAlgorithm] = [.es256, .edDSA, .rs256]

    /// The algorithm named `name`, only if it is one Latchkey accepts.
    public init?(name: String) {
        guard let match = Self.all.first(where: { $0.name == name }) else { return nil }
        self = match
    }

    public var description: String { name }

    /// The only key type this algorithm may be used with.
    var keyType: VerifyingKey.KeyType {
        switch name {
        case "ES256": .p256
        case "EdDSA": .ed25519
        default: .rsa
        }
    }
}
