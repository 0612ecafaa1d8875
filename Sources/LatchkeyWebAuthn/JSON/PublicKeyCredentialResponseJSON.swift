#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// A response a client sends to a relying party, read and written as strict L3 JSON.
public protocol WebAuthnResponseJSON: Codable, Hashable, Sendable {
    /// Parses the JSON a client sent (bounded in size; a typed error names the bad field).
    init(json: Data) throws
}

extension WebAuthnResponseJSON {
    /// Parses the JSON a client sent (bounded in size; a typed error names the bad field).
    public init(json: Data) throws {
        self = try WebAuthnJSON.decode(Self.self, from: json)
    }

    /// The JSON to send: sorted keys, base64url without padding.
    public func json() throws -> Data { try WebAuthnJSON.encode(self) }
}

/// The empty `clientExtensionResults` object Latchkey reports (no client extensions run).
public struct AuthenticationExtensionsClientOutputsJSON: Codable, Hashable, Sendable {
    public init() {}
}

/// `AuthenticatorAttestationResponseJSON` (L3 §5.2.1).
public struct AuthenticatorAttestationResponseJSON: Codable, Hashable, Sendable {
    public var clientDataJSON: Base64URLBytes
    public var authenticatorData: Base64URLBytes?
    public var transports: [String]?
    /// SubjectPublicKeyInfo DER of the credential key.
    public var publicKey: Base64URLBytes?
    public var publicKeyAlgorithm: Int?
    public var attestationObject: Base64URLBytes
}

/// `RegistrationResponseJSON` (L3 §5.1.8): what a client sends back after creating a
/// credential. Latchkey emits it strictly: `id` is the base64url of `rawId`, every L3
/// member is present, and `clientExtensionResults` is `{}`.
public struct RegistrationResponseJSON: WebAuthnResponseJSON {
    public var id: String
    public var rawId: Base64URLBytes
    public var response: AuthenticatorAttestationResponseJSON
    public var authenticatorAttachment: String?
    public var clientExtensionResults: AuthenticationExtensionsClientOutputsJSON
    public var type: String

    public init(
        credentialID: Data,
        clientDataJSON: Data,
        attestationObject: AttestationObject,
        transports: [String] = ["internal"],
        authenticatorAttachment: String? = "platform"
    ) {
        let key = attestationObject.authenticatorData.attestedCredentialData?.credentialPublicKey
        id = Base64URLBytes(credentialID).description
        rawId = Base64URLBytes(credentialID)
        response = AuthenticatorAttestationResponseJSON(
            clientDataJSON: Base64URLBytes(clientDataJSON),
            authenticatorData: Base64URLBytes(attestationObject.authenticatorData.bytes),
            transports: transports,
            publicKey: key.map { Base64URLBytes($0.verifyingKey.spkiDER) },
            publicKeyAlgorithm: key?.algorithm.coseIdentifier,
            attestationObject: Base64URLBytes(attestationObject.encoded)
        )
        self.authenticatorAttachment = authenticatorAttachment
        clientExtensionResults = AuthenticationExtensionsClientOutputsJSON()
        type = "public-key"
    }
}

/// `AuthenticatorAssertionResponseJSON` (L3 §5.2.2).
public struct AuthenticatorAssertionResponseJSON: Codable, Hashable, Sendable {
    public var clientDataJSON: Base64URLBytes
    public var authenticatorData: Base64URLBytes
    public var signature: Base64URLBytes
    public var userHandle: Base64URLBytes?
}

/// `AuthenticationResponseJSON` (L3 §5.1.8), emitted as strictly as the registration.
public struct AuthenticationResponseJSON: WebAuthnResponseJSON {
    public var id: String
    public var rawId: Base64URLBytes
    public var response: AuthenticatorAssertionResponseJSON
    public var authenticatorAttachment: String?
    public var clientExtensionResults: AuthenticationExtensionsClientOutputsJSON
    public var type: String

    public init(
        credentialID: Data,
        clientDataJSON: Data,
        authenticatorData: Data,
        signature: Data,
        userHandle: Data?,
        authenticatorAttachment: String? = "platform"
    ) {
        id = Base64URLBytes(credentialID).description
        rawId = Base64URLBytes(credentialID)
        response = AuthenticatorAssertionResponseJSON(
            clientDataJSON: Base64URLBytes(clientDataJSON),
            authenticatorData: Base64URLBytes(authenticatorData),
            signature: Base64URLBytes(signature),
            userHandle: userHandle.map(Base64URLBytes.init)
        )
        self.authenticatorAttachment = authenticatorAttachment
        clientExtensionResults = AuthenticationExtensionsClientOutputsJSON()
        type = "public-key"
    }
}
