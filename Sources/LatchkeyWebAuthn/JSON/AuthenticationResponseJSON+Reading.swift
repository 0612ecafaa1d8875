#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

extension AuthenticationResponseJSON {
    /// Parses the assertion a client sent (L3 §5.1.8), bounded in size, with a typed error
    /// naming the bad member. Read by ``JSONReader`` rather than `JSONDecoder`: a relying
    /// party parses one on every sign-in, and the containers and coding keys of `Decodable`
    /// cost several times the parse (docs/PERFORMANCE.md, "Less per request"). The members
    /// and their rules are the `Codable` ones (`AssertionReadingTests` holds the two
    /// together), with two refusals more: a member named twice, and a
    /// `clientExtensionResults` that is not an object (L3 §5.1.8 makes it a dictionary;
    /// the empty `Decodable` struct took any value, null included).
    public init(json: Data) throws {
        guard json.count <= WebAuthnJSON.maximumSize else {
            throw WebAuthnError.malformedJSON(reason: "AuthenticationResponseJSON over \(WebAuthnJSON.maximumSize) bytes")
        }
        do {
            let members = try JSONMembers(try JSONReader.parse(json))
            id = try members.string("id")
            rawId = try members.bytes("rawId")
            let response = try members.object("response")
            self.response = AuthenticatorAssertionResponseJSON(
                clientDataJSON: try response.bytes("clientDataJSON"),
                authenticatorData: try response.bytes("authenticatorData"),
                signature: try response.bytes("signature"),
                userHandle: try response.optionalBytes("userHandle")
            )
            authenticatorAttachment = try members.optionalString("authenticatorAttachment")
            _ = try members.object("clientExtensionResults")
            clientExtensionResults = AuthenticationExtensionsClientOutputsJSON()
            type = try members.string("type")
        } catch {
            throw WebAuthnError.malformedJSON(reason: "not valid AuthenticationResponseJSON: \(WebAuthnJSON.describe(error))", underlying: error)
        }
    }
}
