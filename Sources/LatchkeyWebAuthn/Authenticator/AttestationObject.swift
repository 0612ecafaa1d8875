#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// The attestation object (WebAuthn §6.5.4): `{"fmt": text, "attStmt": map, "authData": bytes}`.
///
/// Latchkey makes two formats: `none` (§8.7, empty statement) and `packed` self
/// attestation (§8.2: `{"alg": COSE alg, "sig": signature over authData ‖ clientDataHash}`
/// made with the credential key itself).
public struct AttestationObject: Hashable, Sendable {
    public let format: String
    public let statement: CBOR
    public let authenticatorData: AuthenticatorData

    public init(format: String, statement: CBOR, authenticatorData: AuthenticatorData) {
        self.format = format
        self.statement = statement
        self.authenticatorData = authenticatorData
    }

    /// Parses an encoded attestation object.
    public init(encoded: Data) throws {
        func malformed(_ why: String) -> WebAuthnError {
            WebAuthnError.malformedAttestationObject(reason: "attestation object: \(why)")
        }
        let item: CBOR
        do {
            item = try CBOR.decode(encoded)
        } catch {
            throw malformed("not CBOR")
        }
        guard let entries = item.mapEntries, entries.count == 3,
              let format = item["fmt"]?.textValue,
              let statement = item["attStmt"], statement.mapEntries != nil,
              let authData = item["authData"]?.bytesValue
        else { throw malformed("must be a map of fmt, attStmt and authData") }
        self.format = format
        self.statement = statement
        self.authenticatorData = try AuthenticatorData(bytes: authData)
    }

    /// The canonical encoding.
    public var encoded: Data {
        CBOR.map([
            .init(.text("fmt"), .text(format)),
            .init(.text("attStmt"), statement),
            .init(.text("authData"), .bytes(authenticatorData.bytes)),
        ]).encoded()
    }

    /// A `none` attestation (§8.7).
    public static func none(_ authenticatorData: AuthenticatorData) -> AttestationObject {
        AttestationObject(format: AttestationStatementFormat.none.rawValue, statement: .map([]), authenticatorData: authenticatorData)
    }

    /// A `packed` self attestation (§8.2): the credential key signs authData ‖ clientDataHash.
    public static func packedSelf(
        _ authenticatorData: AuthenticatorData,
        clientDataHash: Data,
        algorithm: SigningAlgorithm,
        sign: (Data) throws -> Data
    ) throws -> AttestationObject {
        let signature = try sign(authenticatorData.bytes + clientDataHash)
        return AttestationObject(
            format: AttestationStatementFormat.packed.rawValue,
            statement: .map([.init(.text("alg"), .integer(algorithm.coseIdentifier)), .init(.text("sig"), .bytes(signature))]),
            authenticatorData: authenticatorData
        )
    }
}
