#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A public JSON Web Key (RFC 7517 §4) for the key types Latchkey verifies: EC P-256
/// (RFC 7518 §6.2.1), OKP Ed25519 (RFC 8037 §2) and RSA (RFC 7518 §6.3.1).
///
/// Only public members are modelled; a private member (`d`, `p`, `q`, ...) in parsed
/// JSON is ignored and never emitted. Unknown members are ignored as RFC 7517 §4 asks.
public struct JSONWebKey: Codable, Hashable, Sendable {
    /// Key type: `EC`, `OKP` or `RSA`.
    public var kty: String
    /// Curve for `EC` (`P-256`) and `OKP` (`Ed25519`).
    public var crv: String?
    /// base64url x coordinate (EC) or public key (OKP).
    public var x: String?
    /// base64url y coordinate (EC).
    public var y: String?
    /// base64url RSA modulus.
    public var n: String?
    /// base64url RSA public exponent.
    public var e: String?
    /// Key id (RFC 7517 §4.5).
    public var kid: String?
    /// Intended algorithm (RFC 7517 §4.4).
    public var alg: String?
    /// Intended use, `sig` or `enc` (RFC 7517 §4.2).
    public var use: String?

    /// The `use` of a key for signatures (RFC 7517 §4.2).
    public static let signatureUse = "sig"

    public init(
        kty: String,
        crv: String? = nil,
        x: String? = nil,
        y: String? = nil,
        n: String? = nil,
        e: String? = nil,
        kid: String? = nil,
        alg: String? = nil,
        use: String? = nil
    ) {
        self.kty = kty
        self.crv = crv
        self.x = x
        self.y = y
        self.n = n
        self.e = e
        self.kid = kid
        self.alg = alg
        self.use = use
    }

    /// The RFC 7638 §3 thumbprint: SHA-256 over the required members, in lexicographic
    /// order, with no white space, base64url-encoded. Used as a stable key id and, cut
    /// short, as a fingerprint people can compare.
    public func thumbprint() throws -> String {
        let members: [(String, String?)]
        switch kty {
        case "EC": members = [("crv", crv), ("kty", kty), ("x", x), ("y", y)]
        case "OKP": members = [("crv", crv), ("kty", kty), ("x", x)]
        case "RSA": members = [("e", e), ("kty", kty), ("n", n)]
        default:
            throw CryptoError.unsupportedAlgorithm(reason: "no thumbprint rule for key type \"\(kty)\"")
        }
        var json = "{"
        for (index, (name, value)) in members.enumerated() {
            guard let value, !value.isEmpty, value.utf8.allSatisfy(Self.isPlainJSONCharacter) else {
                throw CryptoError.invalidKey(reason: "JWK member \"\(name)\" is missing or not plain text")
            }
            json += (index == 0 ? "" : ",") + "\"\(name)\":\"\(value)\""
        }
        json += "}"
        return Base64URL.encode(try DigestAlgorithm.sha256.hash(Data(json.utf8)))
    }

    /// Characters that stand for themselves in a JSON string, so the canonical form of
    /// RFC 7638 §3.2 needs no escaping rules: every legitimate member value (base64url
    /// text, curve and key type names) is made of them.
    private static func isPlainJSONCharacter(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }
}

extension VerifyingKey {
    /// Imports a public JWK. The coordinates must be the full field width (RFC 7518
    /// §6.2.1.2); an `EC` key off the curve, an unknown `kty` or `crv`, or RSA under 2048
    /// bits is a ``CryptoError``.
    public init(jwk: JSONWebKey) throws {
        func member(_ name: String, _ value: String?) throws -> Data {
            guard let value else {
                throw CryptoError.invalidKey(reason: "JWK lacks \"\(name)\"")
            }
            return try Base64URL.decode(value)
        }
        switch (jwk.kty, jwk.crv) {
        case ("EC", "P-256"):
            try self.init(p256X: member("x", jwk.x), y: member("y", jwk.y))
        case ("OKP", "Ed25519"):
            try self.init(ed25519RawRepresentation: member("x", jwk.x))
        case ("RSA", nil):
            try self.init(rsaModulus: member("n", jwk.n), exponent: member("e", jwk.e))
        default:
            throw CryptoError.unsupportedAlgorithm(reason: "JWK kty \"\(jwk.kty)\" with crv \"\(jwk.crv ?? "none")\" is not supported"
            )
        }
    }

    /// This key as a public JWK (no `kid`, `alg` or `use`; set them as needed).
    public var jwk: JSONWebKey {
        get throws {
            switch keyType {
            case .p256:
                // The SPKI of a P-256 key ends with x ‖ y.
                let point = spkiDER.suffix(64)
                return JSONWebKey(kty: "EC", crv: "P-256", x: Base64URL.encode(point.prefix(32)), y: Base64URL.encode(point.suffix(32)))
            case .ed25519:
                return JSONWebKey(kty: "OKP", crv: "Ed25519", x: Base64URL.encode(spkiDER.suffix(32)))
            case .rsa:
                let (n, e) = try OpenSSLKeys.rsaComponents(of: key)
                return JSONWebKey(kty: "RSA", n: Base64URL.encode(n), e: Base64URL.encode(e))
            }
        }
    }
}
