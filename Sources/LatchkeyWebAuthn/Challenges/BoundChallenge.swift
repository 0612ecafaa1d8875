#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// A WebAuthn challenge that commits to what is being approved, so that a signature over
/// it approves exactly that (in the spirit of WebAuthn §13.4.3, which asks for random
/// challenges: one of the bound fields is a fresh random nonce).
///
/// `challenge = SHA-256(label ‖ for each field: length as 2 bytes big-endian ‖ field)`.
/// The length prefixes make the encoding injective, so no two field lists share a
/// challenge. Latchkey's device-linking approval uses it (docs/PROTOCOL.md section 5).
public enum BoundChallenge {
    public static func derive(label: String, fields: [Data]) throws -> Data {
        var input = Data(label.utf8)
        for field in fields {
            guard field.count <= Int(UInt16.max) else {
                throw WebAuthnError.malformedJSON(reason: "a bound challenge field is over 65535 bytes")
            }
            input.append(UInt8(truncatingIfNeeded: field.count >> 8))
            input.append(UInt8(truncatingIfNeeded: field.count))
            input.append(field)
        }
        return try DigestAlgorithm.sha256.hash(input)
    }

    /// The label of device-linking approvals.
    public static let transferApprovalLabel = "latchkey-transfer-approval-v1"

    /// The challenge an exporter signs to approve an import: it binds the transfer, the
    /// importer's credential ID, its key's RFC 7638 thumbprint, its device name and a nonce.
    public static func transferApproval(transferID: String, credentialID: Data, thumbprint: String, deviceName: String, nonce: Data) throws -> Data {
        try derive(label: transferApprovalLabel, fields: [Data(transferID.utf8), credentialID, Data(thumbprint.utf8), Data(deviceName.utf8), nonce])
    }
}
