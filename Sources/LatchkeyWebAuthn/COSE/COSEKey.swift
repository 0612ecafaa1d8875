#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// A credential public key as a COSE_Key (RFC 9052 §7, RFC 9053 §7), the form WebAuthn puts
/// in authenticator data (§6.5.1.1):
///
/// - ES256: `{1: 2 (EC2), 3: -7, -1: 1 (P-256), -2: x, -3: y}`, x and y 32 bytes each
///   (RFC 9053 §7.1.1: leading zero octets are kept).
/// - EdDSA/Ed25519: `{1: 1 (OKP), 3: -8, -1: 6 (Ed25519), -2: x}`, x 32 bytes (RFC 9053 §7.2).
///
/// Parsing checks that key type, algorithm and curve agree, refuses a key that carries a
/// private part (`-4`), and builds the OpenSSL key from the raw coordinates (~28 µs,
/// against ~200 µs to parse an SPKI: docs/ARCHITECTURE.md, "The crypto core").
public struct COSEKey: Hashable, Sendable {
    public let algorithm: SigningAlgorithm
    public let verifyingKey: VerifyingKey

    /// Labels and values from RFC 9052/9053 and the IANA COSE registries.
    enum Label {
        static let keyType = 1
        static let algorithm = 3
        static let curve = -1
        static let x = -2
        static let y = -3
        static let privateKey = -4
    }

    public init(_ verifyingKey: VerifyingKey) throws {
        switch verifyingKey.keyType {
        case .p256: algorithm = .es256
        case .ed25519: algorithm = .ed25519
        default:
            throw WebAuthnError.unsupportedAlgorithm(reason: "only ES256 and Ed25519 credential keys are supported")
        }
        self.verifyingKey = verifyingKey
    }

    /// Parses a COSE_Key map.
    public init(cbor: CBOR) throws {
        func malformed(_ why: String) -> WebAuthnError {
            WebAuthnError.malformedCOSEKey(reason: "COSE key: \(why)")
        }
        guard cbor.mapEntries != nil else { throw malformed("not a map") }
        guard cbor[Label.privateKey] == nil else { throw malformed("carries a private key") }
        guard let keyType = cbor[Label.keyType]?.intValue, let alg = cbor[Label.algorithm]?.intValue,
              let curve = cbor[Label.curve]?.intValue, let x = cbor[Label.x]?.bytesValue
        else { throw malformed("kty, alg, crv or x missing or of the wrong type") }
        switch (keyType, alg, curve) {
        case (2, -7, 1):
            guard let y = cbor[Label.y]?.bytesValue else { throw malformed("EC2 key without y") }
            guard x.count == 32, y.count == 32 else { throw malformed("P-256 coordinates must be 32 bytes each") }
            do {
                verifyingKey = try VerifyingKey(p256X: x, y: y)
            } catch {
                throw malformed("point is not on P-256")
            }
            algorithm = .es256
        case (1, -8, 6):
            guard cbor[Label.y] == nil else { throw malformed("OKP key with y") }
            guard x.count == 32 else { throw malformed("Ed25519 key must be 32 bytes") }
            do {
                verifyingKey = try VerifyingKey(ed25519RawRepresentation: x)
            } catch {
                throw malformed("not an Ed25519 public key")
            }
            algorithm = .ed25519
        default:
            throw WebAuthnError.unsupportedAlgorithm(reason: "COSE key kty \(keyType), alg \(alg), crv \(curve) is not ES256/P-256 or EdDSA/Ed25519"
            )
        }
    }

    /// Parses an encoded COSE_Key.
    public init(encoded: Data) throws {
        try self.init(cbor: CBOR.decode(encoded))
    }

    /// The COSE_Key map.
    public var cbor: CBOR {
        // The SPKI ends with the raw key: x ‖ y for P-256, x for Ed25519.
        let spki = verifyingKey.spkiDER
        switch algorithm {
        case .ed25519:
            return .map([
                .init(.integer(Label.keyType), .integer(1)),
                .init(.integer(Label.algorithm), .integer(-8)),
                .init(.integer(Label.curve), .integer(6)),
                .init(.integer(Label.x), .bytes(spki.suffix(32))),
            ])
        default:
            let point = spki.suffix(64)
            return .map([
                .init(.integer(Label.keyType), .integer(2)),
                .init(.integer(Label.algorithm), .integer(-7)),
                .init(.integer(Label.curve), .integer(1)),
                .init(.integer(Label.x), .bytes(point.prefix(32))),
                .init(.integer(Label.y), .bytes(point.suffix(32))),
            ])
        }
    }

    /// The canonical encoding.
    public var encoded: Data { cbor.encoded() }
}
