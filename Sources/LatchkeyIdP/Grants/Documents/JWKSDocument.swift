import LatchkeyCrypto

/// The provider's published keys (RFC 7517 §5), each an EC P-256 public key with the
/// `kid`, `alg` and `use` of RFC 7517 §4.
struct JWKSDocument: Encodable, Sendable {
    var keys: [JSONWebKey]
}
