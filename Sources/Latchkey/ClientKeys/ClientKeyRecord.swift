#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The metadata of a client key's vault record (``ClientKey``): which provider and client
/// the key authenticates, sealed in the vault like every record's metadata. One record
/// per (issuer, client id).
struct ClientKeyRecord: VaultRecordMetadata, Sendable {
    /// Marks client key records among the vault's records.
    static let kind = "client-key"

    var kind: String
    var issuer: String
    var clientID: String

    init(issuer: String, clientID: String) {
        kind = Self.kind
        self.issuer = issuer
        self.clientID = clientID
    }
}
