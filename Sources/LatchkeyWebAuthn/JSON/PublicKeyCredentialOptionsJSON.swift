#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// `PublicKeyCredentialRpEntity` (§5.4.2).
public struct PublicKeyCredentialRpEntity: Codable, Hashable, Sendable {
    public var id: String?
    public var name: String
    public init(id: String?, name: String) {
        self.id = id
        self.name = name
    }
}

/// `PublicKeyCredentialUserEntityJSON` (§5.4.3, L3 JSON).
public struct PublicKeyCredentialUserEntityJSON: Codable, Hashable, Sendable {
    public var id: Base64URLBytes
    public var name: String
    public var displayName: String
    public init(id: Data, name: String, displayName: String) {
        self.id = Base64URLBytes(id)
        self.name = name
        self.displayName = displayName
    }
}

/// `PublicKeyCredentialParameters` (§5.3).
public struct PublicKeyCredentialParameters: Codable, Hashable, Sendable {
    public var type: String
    public var alg: Int
    public init(type: String = "public-key", alg: Int) {
        self.type = type
        self.alg = alg
    }
}

/// `PublicKeyCredentialDescriptorJSON` (§5.8.3, L3 JSON).
public struct PublicKeyCredentialDescriptorJSON: Codable, Hashable, Sendable {
    public var id: Base64URLBytes
    public var type: String
    public var transports: [String]?
    public init(id: Data, type: String = "public-key", transports: [String]? = nil) {
        self.id = Base64URLBytes(id)
        self.type = type
        self.transports = transports
    }

    /// What `JSONEncoder` with sorted keys writes for this descriptor, written directly.
    public var encodedJSON: [UInt8] {
        var writer = JSONObjectWriter(capacity: 64 + id.data.count * 2)
        writer.string("id", id.description)
        if let transports { writer.strings("transports", transports) }
        writer.string("type", type)
        return writer.finishedBytes()
    }
}

/// `AuthenticatorSelectionCriteria` (§5.4.4).
public struct AuthenticatorSelectionCriteria: Codable, Hashable, Sendable {
    public var authenticatorAttachment: String?
    public var residentKey: String?
    public var requireResidentKey: Bool?
    public var userVerification: String?
    public init(authenticatorAttachment: String? = nil, residentKey: String? = nil, requireResidentKey: Bool? = nil, userVerification: String? = nil) {
        self.authenticatorAttachment = authenticatorAttachment
        self.residentKey = residentKey
        self.requireResidentKey = requireResidentKey
        self.userVerification = userVerification
    }
}

/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn L3 §5.1.9). Parsed liberally, bare or
/// inside `{"publicKey": …}`, with unknown members (extensions, hints) ignored.
public struct PublicKeyCredentialCreationOptionsJSON: Codable, Hashable, Sendable {
    public var rp: PublicKeyCredentialRpEntity
    public var user: PublicKeyCredentialUserEntityJSON
    public var challenge: Base64URLBytes
    public var pubKeyCredParams: [PublicKeyCredentialParameters]
    public var timeout: Int?
    public var excludeCredentials: [PublicKeyCredentialDescriptorJSON]?
    public var authenticatorSelection: AuthenticatorSelectionCriteria?
    public var attestation: String?

    public init(
        rp: PublicKeyCredentialRpEntity,
        user: PublicKeyCredentialUserEntityJSON,
        challenge: Data,
        pubKeyCredParams: [PublicKeyCredentialParameters],
        timeout: Int? = nil,
        excludeCredentials: [PublicKeyCredentialDescriptorJSON]? = nil,
        authenticatorSelection: AuthenticatorSelectionCriteria? = nil,
        attestation: String? = nil
    ) {
        self.rp = rp
        self.user = user
        self.challenge = Base64URLBytes(challenge)
        self.pubKeyCredParams = pubKeyCredParams
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        self.authenticatorSelection = authenticatorSelection
        self.attestation = attestation
    }

    /// Parses options JSON, bare or wrapped in `{"publicKey": …}`.
    public init(json: Data) throws {
        self = try WebAuthnJSON.decodeOptions(Self.self, from: json)
    }
}

/// `PublicKeyCredentialRequestOptionsJSON` (WebAuthn L3 §5.1.10), parsed as liberally.
public struct PublicKeyCredentialRequestOptionsJSON: Codable, Hashable, Sendable {
    public var challenge: Base64URLBytes
    public var timeout: Int?
    public var rpId: String?
    public var allowCredentials: [PublicKeyCredentialDescriptorJSON]?
    public var userVerification: String?

    public init(
        challenge: Data,
        timeout: Int? = nil,
        rpId: String? = nil,
        allowCredentials: [PublicKeyCredentialDescriptorJSON]? = nil,
        userVerification: String? = nil
    ) {
        self.challenge = Base64URLBytes(challenge)
        self.timeout = timeout
        self.rpId = rpId
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
    }

    /// Parses options JSON, bare or wrapped in `{"publicKey": …}`.
    public init(json: Data) throws {
        self = try WebAuthnJSON.decodeOptions(Self.self, from: json)
    }

    /// What `JSONEncoder` with sorted keys writes for these options, written directly
    /// (``JSONObjectWriter``): a provider sends them on every sign-in.
    public var encodedJSON: [UInt8] {
        var writer = JSONObjectWriter(capacity: 128 + 80 * (allowCredentials?.count ?? 0))
        if let allowCredentials {
            writer.jsonArray("allowCredentials", allowCredentials.map(\.encodedJSON))
        }
        writer.string("challenge", challenge.description)
        writer.string("rpId", ifPresent: rpId)
        writer.integer("timeout", ifPresent: timeout)
        writer.string("userVerification", ifPresent: userVerification)
        return writer.finishedBytes()
    }
}
