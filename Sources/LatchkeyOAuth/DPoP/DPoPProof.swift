#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// A DPoP proof JWT (RFC 9449 §4.2): a JWS the client signs with its DPoP key for one HTTP
/// request, so a token bound to that key is useless to whoever copies it without the key.
///
/// Header: `typ: dpop+jwt`, `alg` (ES256 or EdDSA), `jwk` with the public members only.
/// Claims: `jti` (128 random bits), `htm`, `htu` (the URL without query and fragment),
/// `iat`, and `ath` (RFC 9449 §4.2: base64url SHA-256 of the access token) when one is
/// presented, `nonce` when the server gave one.
public enum DPoPProof {
    /// The proof's `typ` (RFC 9449 §4.2).
    public static let type = "dpop+jwt"
    /// The HTTP header carrying a proof (RFC 9449 §4.1), and the one carrying a server's
    /// nonce (§8.1).
    public static let headerName = "DPoP"
    public static let nonceHeaderName = "DPoP-Nonce"

    /// Makes a proof for `method` on `url`. `sign` signs the JWS signing input with the
    /// private half of `publicKey` and returns what `SigningKey` or `KeyVault.sign` give
    /// (DER for ES256, 64 bytes for Ed25519), so the key may live in the vault or a TPM.
    public static func make(
        method: String,
        url: URL,
        publicKey: VerifyingKey,
        accessToken: String? = nil,
        nonce: String? = nil,
        issuedAt: Date = Date(),
        sign: (Data) throws -> Data
    ) throws -> String {
        let algorithm = try Self.algorithm(for: publicKey)
        let target = try DPoPTarget(url)
        let encodedHeader = try Self.encodedHeader(publicKey: publicKey, algorithm: algorithm)
        return try signed(
            encodedHeader: encodedHeader, algorithm: algorithm, method: method, htuJSON: JSONObjectWriter.quoted(target.text),
            accessTokenHash: try accessToken.map(accessTokenHash), nonce: nonce, issuedAt: issuedAt, sign: sign
        )
    }

    /// The JWS algorithm of a DPoP key: ES256 for P-256, EdDSA for Ed25519, nothing else.
    static func algorithm(for publicKey: VerifyingKey) throws -> JWSAlgorithm {
        switch publicKey.keyType {
        case .p256: .es256
        case .ed25519: .edDSA
        default: throw OAuthError.algorithmNotAllowed(reason: "a DPoP key is ES256 or EdDSA")
        }
    }

    /// The base64url protected header of every proof made with `publicKey` (built by
    /// hand: JSONEncoder costs more than the signature; every string is escaped).
    static func encodedHeader(publicKey: VerifyingKey, algorithm: JWSAlgorithm) throws -> String {
        let jwk = try publicKey.jwk
        var key = "{\"crv\":" + JSONObjectWriter.quoted(jwk.crv ?? "") + ",\"kty\":" + JSONObjectWriter.quoted(jwk.kty) + ",\"x\":" + JSONObjectWriter.quoted(jwk.x ?? "")
        if let y = jwk.y { key += ",\"y\":" + JSONObjectWriter.quoted(y) }
        key += "}"
        return Base64URL.encode(Data("{\"alg\":\"\(algorithm.name)\",\"jwk\":\(key),\"typ\":\"\(type)\"}".utf8))
    }

    /// A proof under a prepared header, for a normalised `htu` already written as a JSON
    /// string and an access token's `ath` already computed (a client sends many proofs
    /// for the same few URLs and the same token).
    static func signed(
        encodedHeader: String, algorithm: JWSAlgorithm, method: String, htuJSON: String, accessTokenHash: String?, nonce: String?,
        issuedAt: Date, sign: (Data) throws -> Data
    ) throws -> String {
        guard !method.isEmpty, method.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) else {
            throw OAuthError.invalidDPoPProof(reason: "the HTTP method is upper-case letters (RFC 9110 §9)")
        }
        var claims = "{\"htm\":\"" + method + "\",\"htu\":" + htuJSON
        claims += ",\"iat\":\(Int(issuedAt.timeIntervalSince1970.rounded(.down))),\"jti\":\"" + Base64URL.encode(try SecureRandom.bytes(count: 16)) + "\""
        if let accessTokenHash { claims += ",\"ath\":\"" + accessTokenHash + "\"" }
        if let nonce { claims += ",\"nonce\":" + JSONObjectWriter.quoted(nonce) }
        claims += "}"
        let signingInput = encodedHeader + "." + Base64URL.encode(Data(claims.utf8))
        var signature = try sign(Data(signingInput.utf8))
        if algorithm == .es256 {
            // RFC 7518 §3.4: r ‖ s.
            signature = try ECDSASignature(derRepresentation: signature).rawRepresentation
        }
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Makes a proof with a software key.
    public static func make(method: String, url: URL, key: SigningKey, accessToken: String? = nil, nonce: String? = nil, issuedAt: Date = Date()) throws -> String {
        try make(method: method, url: url, publicKey: key.publicKey, accessToken: accessToken, nonce: nonce, issuedAt: issuedAt) {
            try key.signature(for: $0)
        }
    }

    /// `ath` (RFC 9449 §4.2): base64url of the SHA-256 of the access token's ASCII bytes.
    public static func accessTokenHash(_ accessToken: String) throws -> String {
        Base64URL.encode(try DigestAlgorithm.sha256.hash(Data(accessToken.utf8)))
    }
}
