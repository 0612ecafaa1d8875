#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
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

    /// The members' names, shared by `Codable` and the metadata's own reader and writer.
    enum CodingKeys: String, CodingKey {
        case kind, credentialID, rpID, userHandle, userName, userDisplayName, signCount, createdAt, lastUsedAt, attributes
    }

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
        writer.strings(CodingKeys.attributes.rawValue, attributes)
        try writer.number(CodingKeys.createdAt.rawValue, createdAt.timeIntervalSince1970)
        writer.string(CodingKeys.credentialID.rawValue, credentialID.description)
        writer.string(CodingKeys.kind.rawValue, kind)
        try writer.number(CodingKeys.lastUsedAt.rawValue, ifPresent: lastUsedAt?.timeIntervalSince1970)
        writer.string(CodingKeys.rpID.rawValue, rpID)
        writer.integer(CodingKeys.signCount.rawValue, signCount)
        writer.string(CodingKeys.userDisplayName.rawValue, userDisplayName)
        writer.string(CodingKeys.userHandle.rawValue, userHandle.description)
        writer.string(CodingKeys.userName.rawValue, userName)
        return writer.finished()
    }

    /// The metadata of a vault entry, or nil when the entry is not a WebAuthn credential
    /// (``JSONMembers``, which reads what `JSONDecoder` reads, names given twice aside).
    static func decode(_ data: Data) -> CredentialMetadata? {
        guard let members = try? JSONMembers.parse(data), (try? members.string(CodingKeys.kind.rawValue)) == kind else { return nil }
        do {
            var metadata = CredentialMetadata(
                credentialID: try members.bytes(CodingKeys.credentialID.rawValue).data, rpID: try members.string(CodingKeys.rpID.rawValue), userHandle: try members.bytes(CodingKeys.userHandle.rawValue).data,
                userName: try members.string(CodingKeys.userName.rawValue), userDisplayName: try members.string(CodingKeys.userDisplayName.rawValue),
                createdAt: Date(timeIntervalSince1970: try members.number(CodingKeys.createdAt.rawValue))
            )
            metadata.signCount = try members.unsigned32(CodingKeys.signCount.rawValue)
            metadata.lastUsedAt = try members.optionalNumber(CodingKeys.lastUsedAt.rawValue).map(Date.init(timeIntervalSince1970:))
            metadata.attributes = try members.stringMap(CodingKeys.attributes.rawValue)
            return metadata
        } catch {
            return nil
        }
    }
}
