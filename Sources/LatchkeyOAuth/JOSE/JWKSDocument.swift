public import LatchkeyCrypto

/// A JWK Set document as written (RFC 7517 §5): the provider's published keys, a client's
/// keys for `private_key_jwt`. Each key carries the `kid`, `alg` and `use` of RFC 7517 §4.
/// Reading one for verification is ``JWKSet``'s work, which skips keys it cannot use.
public struct JWKSDocument: Codable, Hashable, Sendable {
    public var keys: [JSONWebKey]

    public init(keys: [JSONWebKey]) {
        self.keys = keys
    }
}
