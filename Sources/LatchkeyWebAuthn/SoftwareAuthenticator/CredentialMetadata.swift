public import Foundation
import LatchkeyCrypto

/// What the software authenticator keeps about a credential, as the vault entry's
/// metadata (JSON, integrity-protected by the vault).
public struct CredentialMetadata: Codable, Hashable, Sendable {
    /// Marks the vault entries that are WebAuthn credentials.
    public static let kind = "webauthn"

    public var kind: String
    public var credentialID: Base64URLBytes
    public var rpID: String
    public var userHandle: Base64URLBytes
    public var userName: String
    public var userDisplayName: String
    /// The signature counter, bumped before every assertion.
    public var signCount: UInt32
    public var createdAt: Date
    /// When the credential last signed an assertion (absent in records written before
    /// it existed, and until the first assertion).
    public var lastUsedAt: Date?
    /// Room for the layers above (the provider's issuer, last use, state).
    public var attributes: [String: String]

    public init(credentialID: Data, rpID: String, userHandle: Data, userName: String, userDisplayName: String, createdAt: Date) {
        kind = Self.kind
        self.credentialID = Base64URLBytes(credentialID)
        self.rpID = rpID
        self.userHandle = Base64URLBytes(userHandle)
        self.userName = userName
        self.userDisplayName = userDisplayName
        signCount = 0
        self.createdAt = createdAt
        attributes = [:]
    }

    /// The metadata as the vault keeps it, written member by member (``JSONObjectWriter``):
    /// every assertion reads, bumps and writes back its counter, and `JSONEncoder` cost
    /// several times the write itself (docs/PERFORMANCE.md, "Less per request"). The text
    /// is what `JSONEncoder` with `.sortedKeys` and `.secondsSince1970` writes, but for `/`,
    /// which this writer leaves as it is where `JSONEncoder` writes `\/`, and for numbers,
    /// which read back as the same `Double`.
    func encoded() throws -> Data {
        var writer = JSONObjectWriter(capacity: 512)
        writer.strings("attributes", attributes)
        try writer.number("createdAt", createdAt.timeIntervalSince1970)
        writer.string("credentialID", credentialID.description)
        writer.string("kind", kind)
        try writer.number("lastUsedAt", ifPresent: lastUsedAt?.timeIntervalSince1970)
        writer.string("rpID", rpID)
        writer.integer("signCount", signCount)
        writer.string("userDisplayName", userDisplayName)
        writer.string("userHandle", userHandle.description)
        writer.string("userName", userName)
        return writer.finished()
    }

    /// The metadata of a vault entry, or nil when the entry is not a WebAuthn credential
    /// (``JSONMembers``, which reads what `JSONDecoder` reads, names given twice aside).
    static func decode(_ data: Data) -> CredentialMetadata? {
        guard let members = try? JSONMembers.parse(data), (try? members.string("kind")) == kind else { return nil }
        do {
            var metadata = CredentialMetadata(
                credentialID: try members.bytes("credentialID").data, rpID: try members.string("rpID"), userHandle: try members.bytes("userHandle").data,
                userName: try members.string("userName"), userDisplayName: try members.string("userDisplayName"),
                createdAt: Date(timeIntervalSince1970: try members.number("createdAt"))
            )
            metadata.signCount = try members.unsigned32("signCount")
            metadata.lastUsedAt = try members.optionalNumber("lastUsedAt").map(Date.init(timeIntervalSince1970:))
            metadata.attributes = try members.stringMap("attributes")
            return metadata
        } catch {
            return nil
        }
    }
}
