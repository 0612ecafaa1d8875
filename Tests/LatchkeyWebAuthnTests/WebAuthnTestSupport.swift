import Foundation
import LatchkeyCrypto
@testable import LatchkeyWebAuthn

/// A software authenticator over a vault in a fresh temporary directory, removed at deinit.
final class AuthenticatorFixture {
    let directory: URL
    let authenticator: SoftwareAuthenticator

    init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-webauthn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let keyFile = directory.appendingPathComponent("vault.key")
        guard FileManager.default.createFile(atPath: keyFile.path, contents: try SecureRandom.bytes(count: 32), attributes: [.posixPermissions: 0o600]) else {
            throw WebAuthnError(code: .vault, reason: "cannot write the test key file")
        }
        let vault = try KeyVault.open(at: directory.appendingPathComponent("vault"), key: .keyFile(keyFile))
        authenticator = SoftwareAuthenticator(vault: vault)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

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

extension Data {
    init(hex: String) {
        var bytes = [UInt8]()
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        self.init(bytes)
    }
}
