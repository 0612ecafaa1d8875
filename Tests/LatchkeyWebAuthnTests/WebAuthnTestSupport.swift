import Foundation
import LatchkeyCrypto
@testable import LatchkeyWebAuthn
import LatchkeyTestSupport

/// A software authenticator over a vault in a fresh temporary directory, removed at deinit.
final class AuthenticatorFixture {
    let temporary: TemporaryDirectory
    let authenticator: SoftwareAuthenticator

    var directory: URL { temporary.url }

    init() throws {
        temporary = try TemporaryDirectory()
        let vault = try KeyVault.open(at: temporary.vault, key: .keyFile(try temporary.keyFile()))
        authenticator = SoftwareAuthenticator(vault: vault)
    }

    static let rpID = "login.example.com"
    static let origin = "https://login.example.com"

    static func creationOptions(
        rpID: String? = rpID,
        challenge: Data = Data(repeating: 7, count: 32),
        algorithms: [Int] = [-7, -8],
        attestation: String? = nil,
        exclude: [Data] = []
    ) -> PublicKeyCredentialCreationOptionsJSON {
        PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: rpID, name: "Example"),
            user: .init(id: Data("user-1".utf8), name: "ada@example.com", displayName: "Ada"),
            challenge: challenge,
            pubKeyCredParams: algorithms.map { .init(alg: $0) },
            excludeCredentials: exclude.isEmpty ? nil : exclude.map { .init(id: $0) },
            attestation: attestation
        )
    }

    static func requestOptions(challenge: Data = Data(repeating: 9, count: 32), allow: [Data] = []) -> PublicKeyCredentialRequestOptionsJSON {
        PublicKeyCredentialRequestOptionsJSON(challenge: challenge, rpId: rpID, allowCredentials: allow.isEmpty ? nil : allow.map { .init(id: $0) })
    }

    static var relyingParty: RelyingParty { RelyingParty(id: rpID, origins: [origin]) }
}
