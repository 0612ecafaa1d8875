#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// A client's own signing key for `private_key_jwt` client authentication (RFC 7523 §2.2,
/// OIDC Core §9): the key a service proves itself with instead of a shared secret. The
/// private half may live anywhere: ``init(publicKey:sign:)`` takes a signing closure, so a
/// key in a `KeyVault` (or in a TPM behind it) signs without leaving it.
///
/// Its ``keyID`` is the key's RFC 7638 thumbprint, and ``publicJWKSet`` is what an operator
/// registers at the provider (Keycloak, Okta, Entra ID, Auth0, Latchkey's own).
public final class ClientAssertionSigner: Sendable {
    public let publicKey: VerifyingKey
    /// The `kid` of every assertion: the public key's RFC 7638 thumbprint.
    public let keyID: String
    /// The public key as a JWK with its `kid`, `alg` and `use` (RFC 7517 §4).
    public let publicJWK: JSONWebKey
    let algorithm: JWSAlgorithm
    private let signer: @Sendable (Data) throws -> Data

    /// A key whose private half signs through `sign` (DER for ES256, as `KeyVault.sign` and
    /// `SigningKey` give; 64 bytes for Ed25519).
    public init(publicKey: VerifyingKey, sign: @escaping @Sendable (Data) throws -> Data) throws {
        self.publicKey = publicKey
        var jwk = try publicKey.jwk
        keyID = try jwk.thumbprint()
        algorithm = try DPoPProof.algorithm(for: publicKey)
        jwk.kid = keyID
        jwk.alg = algorithm.name
        jwk.use = JSONWebKey.signatureUse
        publicJWK = jwk
        signer = sign
    }

    /// A software key.
    public convenience init(key: SigningKey) throws {
        try self.init(publicKey: key.publicKey) { try key.signature(for: $0) }
    }

    /// `{"keys":[…]}` (RFC 7517 §5) holding ``publicJWK``: what the provider registers.
    public var publicJWKSet: Data {
        get throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return try encoder.encode(JWKSDocument(keys: [publicJWK]))
        }
    }

    /// A compact JWS over `payload`, with `kid` and `typ` in its header. ES256 signatures
    /// are turned from DER into the 64-byte `r ‖ s` of RFC 7518 §3.4.
    func sign(payload: Data, type: String) throws -> String {
        let header = try JSONEncoder().encode(["alg": algorithm.name, "kid": keyID, "typ": type])
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        var signature = try signer(Data(signingInput.utf8))
        if algorithm == .es256 {
            signature = try ECDSASignature(derRepresentation: signature).rawRepresentation
        }
        return signingInput + "." + Base64URL.encode(signature)
    }
}
