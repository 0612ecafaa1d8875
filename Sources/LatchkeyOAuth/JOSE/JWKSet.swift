#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// A JWK Set (RFC 7517 §5) of verification keys, parsed once: each key is imported into
/// OpenSSL when the set is read, not per verification (key parsing is OpenSSL 3.0's slow
/// spot: docs/ARCHITECTURE.md, "The crypto core").
///
/// Keys that are not for signatures (`use` other than `sig`), of unsupported types, or
/// malformed are skipped rather than failing the whole set, so one odd key at a provider
/// does not break sign-in; a set with no usable key is an error.
public struct JWKSet: Sendable {
    public struct Key: Sendable {
        public let keyID: String?
        /// The key's `alg`, when it names one.
        public let algorithm: String?
        public let verifyingKey: VerifyingKey

        public init(keyID: String?, algorithm: String?, verifyingKey: VerifyingKey) {
            self.keyID = keyID
            self.algorithm = algorithm
            self.verifyingKey = verifyingKey
        }
    }

    public static let maximumKeys = 64
    public let keys: [Key]

    public init(keys: [Key]) {
        self.keys = keys
    }

    /// Parses a JWKS document.
    public init(json: Data) throws {
        guard json.count <= 256 * 1024 else { throw OAuthError.responseTooLarge(reason: "JWKS over 256 KiB") }
        struct Document: Decodable { var keys: [JSONValue] }
        guard let document = try? JSONDecoder().decode(Document.self, from: json) else {
            throw OAuthError.malformedJWK(reason: "JWKS is not an object with a keys array")
        }
        guard document.keys.count <= Self.maximumKeys else {
            throw OAuthError.malformedJWK(reason: "JWKS with \(document.keys.count) keys (at most \(Self.maximumKeys))")
        }
        var keys: [Key] = []
        for value in document.keys {
            guard let object = value.objectValue, object["use"].map({ $0.stringValue == JSONWebKey.signatureUse }) ?? true,
                  let data = try? JSONEncoder().encode(value), let jwk = try? JSONDecoder().decode(JSONWebKey.self, from: data),
                  let key = try? VerifyingKey(jwk: jwk)
            else { continue }
            keys.append(Key(keyID: jwk.kid, algorithm: jwk.alg, verifyingKey: key))
        }
        guard !keys.isEmpty else { throw OAuthError.malformedJWK(reason: "JWKS holds no usable signature key") }
        self.keys = keys
    }

    /// The key for a JWS: by `kid` when the JWS names one; otherwise the only key of the
    /// right type. A `kid` that names a key of another type, or whose own `alg` differs,
    /// is an ``OAuthError/Code/algorithmKeyMismatch``: an `alg` swapped in the header is
    /// refused, never tried against the wrong kind of key. Nil when no key is known.
    func key(for jws: JWS) throws -> VerifyingKey? {
        if let kid = jws.keyID {
            guard let named = keys.first(where: { $0.keyID == kid }) else { return nil }
            guard named.verifyingKey.keyType == jws.algorithm.keyType, named.algorithm == nil || named.algorithm == jws.algorithm.name else {
                throw OAuthError.algorithmKeyMismatch(reason: "JWS alg \(jws.algorithm) does not fit key \(kid)")
            }
            return named.verifyingKey
        }
        let fitting = keys.filter { $0.verifyingKey.keyType == jws.algorithm.keyType && ($0.algorithm == nil || $0.algorithm == jws.algorithm.name) }
        return fitting.count == 1 ? fitting.first?.verifyingKey : nil
    }
}
