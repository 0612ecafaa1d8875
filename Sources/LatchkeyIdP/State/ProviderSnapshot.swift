import Foundation
import LatchkeyCrypto
import LatchkeyWebAuthn

/// What survives a restart when the provider has a data directory: identities and
/// credentials (`state.json`, rewritten atomically after each change) and the signing
/// key (`signing-key.pem`, PKCS#8, mode 0600, written once). Sessions, codes and tokens
/// are deliberately not kept: a restart signs everyone out.
struct ProviderSnapshot: Codable {
    struct IdentityRecord: Codable {
        var id: String
        var username: String
        var email: String?
        var displayName: String
    }

    struct CredentialRecord: Codable {
        var id: String
        var identityID: String
        var publicKey: String
        var signCount: UInt32
        var backupEligible: Bool
        var backupState: Bool
        var userVerified: Bool
        var attestationFormat: String
        var aaguid: String
        var transports: [String]
        var revoked: Bool
    }

    var format = 1
    var identities: [IdentityRecord]
    var credentials: [CredentialRecord]

    static let stateFile = "state.json"
    static let keyFile = "signing-key.pem"

    /// The signing key from `directory`, made and stored on first use.
    static func signingKey(in directory: URL) throws -> SigningKey {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = directory.appendingPathComponent(keyFile).path
        if FileManager.default.fileExists(atPath: path) {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            if let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0 {
                throw ProviderError(status: 500, error: "server_error", description: "\(path) is readable by others; chmod 600 it")
            }
            return try SigningKey(pemRepresentation: String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self))
        }
        let key = try SigningKey.generate(.es256)
        let pem = try key.withPKCS8DER { der in
            "-----BEGIN PRIVATE KEY-----\n" + Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed]) + "\n-----END PRIVATE KEY-----\n"
        }
        guard FileManager.default.createFile(atPath: path, contents: Data(pem.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ProviderError(status: 500, error: "server_error", description: "cannot write \(path)")
        }
        return key
    }

    static func load(from directory: URL) throws -> ProviderSnapshot? {
        let url = directory.appendingPathComponent(stateFile)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let snapshot = try JSONDecoder().decode(ProviderSnapshot.self, from: Data(contentsOf: url))
        guard snapshot.format == 1 else {
            throw ProviderError(status: 500, error: "server_error", description: "\(url.path) has an unknown format")
        }
        return snapshot
    }

    func save(to directory: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try encoder.encode(self).write(to: directory.appendingPathComponent(Self.stateFile), options: [.atomic])
    }

    static func record(_ credential: ProviderState.Credential) -> CredentialRecord {
        let record = credential.record
        return CredentialRecord(
            id: Base64URL.encode(record.id), identityID: credential.identityID, publicKey: Base64URL.encode(record.publicKey.encoded),
            signCount: record.signCount, backupEligible: record.backupEligible, backupState: record.backupState,
            userVerified: record.userVerified, attestationFormat: record.attestationFormat, aaguid: Base64URL.encode(record.aaguid),
            transports: record.transports, revoked: credential.revoked
        )
    }

    static func credential(_ record: CredentialRecord) throws -> ProviderState.Credential {
        ProviderState.Credential(
            identityID: record.identityID,
            record: .init(
                id: try Base64URL.decode(record.id), publicKey: try COSEKey(encoded: Base64URL.decode(record.publicKey)),
                signCount: record.signCount, backupEligible: record.backupEligible, backupState: record.backupState,
                userVerified: record.userVerified, attestationFormat: record.attestationFormat,
                aaguid: try Base64URL.decode(record.aaguid), transports: record.transports
            ),
            revoked: record.revoked
        )
    }
}
