public import Foundation

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

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        return try encoder.encode(self)
    }

    /// The metadata of a vault entry, or nil when the entry is not a WebAuthn credential.
    static func decode(_ data: Data) -> CredentialMetadata? {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard let metadata = try? decoder.decode(CredentialMetadata.self, from: data), metadata.kind == kind else { return nil }
        return metadata
    }
}
