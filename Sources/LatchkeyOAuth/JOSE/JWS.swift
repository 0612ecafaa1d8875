#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// A JWS in compact serialization (RFC 7515 §7.1): parsed strictly, signed with ES256 or
/// EdDSA, verified with ES256, EdDSA or RS256.
public struct JWS: Sendable {
    /// Largest compact JWS accepted.
    public static let maximumSize = 64 * 1024

    /// The protected header's members.
    public let header: [String: JSONValue]
    /// The header's `alg`, already checked against the allow-list.
    public let algorithm: JWSAlgorithm
    public let keyID: String?
    public let payload: Data
    public let signature: Data
    /// `BASE64URL(header) || '.' || BASE64URL(payload)`, what the signature covers.
    public let signingInput: Data

    /// Parses a compact JWS. Refuses: anything but three base64url parts, a header that
    /// is not a JSON object, an `alg` outside the allow-list (`none`, `HS256`, ...), and a
    /// `crit` header (RFC 7515 §4.1.11: Latchkey understands no extensions, so any is fatal).
    public init(compact: String) throws {
        func malformed(_ why: String) -> OAuthError { OAuthError.malformedJWS(reason: "JWS: \(why)") }
        guard compact.utf8.count <= Self.maximumSize else { throw malformed("over \(Self.maximumSize) bytes") }
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw malformed("\(parts.count) parts instead of 3 (JWE and JSON serializations are not accepted)") }
        guard let headerBytes = try? Base64URL.decode(parts[0]), let payload = try? Base64URL.decode(parts[1]),
              let signature = try? Base64URL.decode(parts[2])
        else { throw malformed("a part is not base64url") }
        // Read strictly (``JSONValue/object(from:maximumSize:what:)``): a header parameter
        // named twice is refused, as RFC 7515 §4 lets a parser do.
        guard let header = try? JSONValue.object(from: headerBytes, maximumSize: Self.maximumSize, what: "the JWS header") else {
            throw malformed("the header is not a JSON object")
        }
        guard let name = header["alg"]?.stringValue else { throw malformed("the header has no alg") }
        guard let algorithm = JWSAlgorithm(name: name) else {
            throw OAuthError.algorithmNotAllowed(reason: "JWS alg \"\(name)\" is not accepted (allowed: ES256, EdDSA, RS256)")
        }
        if header["crit"] != nil {
            throw OAuthError.unsupportedCriticalHeader(reason: "JWS header lists critical extensions Latchkey does not understand")
        }
        if let kid = header["kid"], kid.stringValue == nil { throw malformed("kid is not a string") }
        self.header = header
        self.algorithm = algorithm
        self.keyID = header["kid"]?.stringValue
        self.payload = payload
        self.signature = signature
        self.signingInput = Data("\(parts[0]).\(parts[1])".utf8)
    }

    /// Verifies the signature with `key`, which must be of the type the header's `alg`
    /// names (an `alg` swapped to another key type is refused, not tried).
    public func verify(with key: VerifyingKey) throws {
        guard key.keyType == algorithm.keyType else {
            throw OAuthError.algorithmKeyMismatch(reason: "JWS alg \(algorithm) does not fit a \(key.keyType) key")
        }
        let signatureToCheck: Data
        if algorithm == .es256 {
            // RFC 7518 §3.4: r ‖ s, 64 bytes; OpenSSL wants DER.
            guard let raw = try? ECDSASignature(rawRepresentation: signature) else {
                throw OAuthError.invalidSignature(reason: "ES256 signature is not 64 bytes")
            }
            signatureToCheck = raw.derRepresentation
        } else {
            signatureToCheck = signature
        }
        guard key.isValidSignature(signatureToCheck, for: signingInput) else {
            throw OAuthError.invalidSignature(reason: "the JWS signature does not verify")
        }
    }

    /// Signs `payload` as a compact JWS with an ES256 or Ed25519 key.
    public static func sign(payload: Data, with key: SigningKey, keyID: String? = nil, type: String? = nil) throws -> String {
        var header = JSONObjectWriter(capacity: 96)
        header.string("alg", key.algorithm.joseName)
        header.string("kid", ifPresent: keyID)
        header.string("typ", ifPresent: type)
        let signingInput = Base64URL.encode(header.finished()) + "." + Base64URL.encode(payload)
        var signature = try key.signature(for: Data(signingInput.utf8))
        if key.algorithm == .es256 {
            signature = try ECDSASignature(derRepresentation: signature).rawRepresentation
        }
        return signingInput + "." + Base64URL.encode(signature)
    }
}
