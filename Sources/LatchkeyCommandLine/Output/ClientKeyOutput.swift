#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyCrypto
import LatchkeyOAuth

/// `client-key --json`.
struct ClientKeyOutput: Encodable {
    var issuer: String
    var clientID: String
    var keyID: String
    /// `software` or `tpm`.
    var keyProtection: String
    /// Whether this run made the key.
    var created: Bool
    var jwks: JSONValue
    var publicKeyPEM: String

    init(_ key: ClientKey, created: Bool) throws {
        issuer = key.issuer.absoluteString
        clientID = key.clientID
        keyID = key.keyID
        keyProtection = key.keyProtection.rawValue
        self.created = created
        jwks = try JSONDecoder().decode(JSONValue.self, from: key.publicJWKSet)
        publicKeyPEM = key.publicKeyPEM
    }
}
