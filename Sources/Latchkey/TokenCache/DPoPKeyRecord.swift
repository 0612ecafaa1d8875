#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// The metadata of a credential's DPoP key record: a vault record of its own, so the key
/// that proves possession of tokens (RFC 9449) is never the WebAuthn credential's key and
/// no key signs in two protocols. It is made the first time the credential's tokens are
/// kept or bound, protected as the credential is (in the TPM when the credential's key
/// is), and deleted with the credential.
///
/// Its sealed metadata also holds the credential's token cache (``CachedTokens``), at
/// most ``maximumEntries`` sign-ins (one per issuer, client and redirect URI).
struct DPoPKeyRecord: VaultRecordMetadata, Sendable {
    /// Marks DPoP key records among the vault's records (credentials are `webauthn`).
    static let kind = "dpop"
    /// Sign-ins kept per credential; the oldest goes first.
    static let maximumEntries = 8
    /// The owner of the record that keeps device sign-ins (RFC 8628): no credential on
    /// this host signed them in.
    static let deviceGrantOwner = "device-grant"

    var kind: String
    /// The ``KeyHandle`` of the record whose tokens these are: a credential's, or a client
    /// key's (``ClientKey``, whose own tokens are kept here per scope set).
    var credential: String
    var tokens: [CachedTokens]

    /// The members' names, shared by `Codable` and the record's own reader and writer.
    enum CodingKeys: String, CodingKey {
        case kind, credential, tokens
    }

    init(owner: String) {
        kind = Self.kind
        credential = owner
        tokens = []
    }

    /// Keeps `entry`, replacing the one for the same client, newest last, and drops the
    /// oldest beyond ``maximumEntries`` or beyond what a record's metadata may hold.
    mutating func keep(_ entry: CachedTokens) throws -> Data {
        tokens.removeAll { $0.sameClient(as: entry) }
        tokens.append(entry)
        if tokens.count > Self.maximumEntries { tokens.removeFirst(tokens.count - Self.maximumEntries) }
        var data = try encoded()
        while data.count > KeyVault.maximumMetadataByteCount, tokens.count > 1 {
            tokens.removeFirst()
            data = try encoded()
        }
        return data
    }
}
