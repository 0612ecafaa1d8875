import Foundation
@testable import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

/// The crypto core's and the vault's share of the hostile-input list (LatchkeyTests'
/// HostileInputSuite has the attacks across modules): each named case must be refused
/// with its own ``CryptoError/Code`` or ``KeyVaultError/Code``.
@Suite("Crypto and vault hostile input")
struct HostileInputTests {
    /// What an attack works in: a fresh private directory and a vault key file in it.
    struct Context: Sendable {
        let temporary: TemporaryDirectory
        let keyFile: URL
        var directory: URL { temporary.url }

        init() throws {
            temporary = try TemporaryDirectory()
            keyFile = try temporary.keyFile()
        }
    }

    typealias Attack = HostileCase<Context, String>

    // MARK: Crypto core

    static let crypto: [Attack] = [
        Attack("base64url with padding", "invalidEncoding") { _ in _ = try Base64URL.decode("YWJj=") },
        Attack("base64url with the + of standard base64", "invalidEncoding") { _ in _ = try Base64URL.decode("ab+c") },
        Attack("base64url with an impossible length", "invalidEncoding") { _ in _ = try Base64URL.decode("abcde") },
        Attack("PEM with another label", "invalidEncoding") { _ in
            _ = try SigningKey(pemRepresentation: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
        },
        Attack("SPKI of an unsupported curve (P-384 point length)", "invalidKey") { _ in
            _ = try VerifyingKey(spkiDER: Data([0x30, 0x76]) + Data(count: 118))
        },
        Attack("JWK with a short EC coordinate", "invalidKey") { _ in
            _ = try VerifyingKey(jwk: JSONWebKey(kty: "EC", crv: "P-256", x: Base64URL.encode(Data(count: 31)), y: Base64URL.encode(Data(count: 32))))
        },
        Attack("AES-GCM ciphertext with a flipped tag bit", "authenticationFailure") { _ in
            let key = SymmetricKey(data: try SecureRandom.bytes(count: 32))
            var sealed = try AESGCM.seal(Data("secret".utf8), using: key)
            var tag = sealed.tag
            tag[tag.count - 1] ^= 1
            sealed.tag = tag
            _ = try AESGCM.open(sealed, using: key)
        },
    ]

    // MARK: Vault

    static func newVault(_ context: Context) throws -> (URL, KeyVault) {
        let directory = context.directory.appendingPathComponent("v-\(UUID().uuidString)")
        return (directory, try KeyVault.open(at: directory, key: .keyFile(context.keyFile)))
    }

    static let vault: [Attack] = [
        Attack("vault: wrong passphrase", "wrongKey") { context in
            let directory = context.directory.appendingPathComponent("p-\(UUID().uuidString)")
            let fast = Scrypt.Parameters(costFactor: 1 << 10, blockSize: 8, parallelism: 1)
            _ = try KeyVault.open(at: directory, key: .passphrase("the right passphrase", scrypt: fast))
            _ = try KeyVault.open(at: directory, key: .passphrase("a wrong passphrase", scrypt: fast))
        },
        Attack("vault: a new vault with a one-character passphrase", "weakPassphrase") { context in
            let directory = context.directory.appendingPathComponent("p-\(UUID().uuidString)")
            let fast = Scrypt.Parameters(costFactor: 1 << 10, blockSize: 8, parallelism: 1)
            defer { #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("vault.json").path), "a weak vault was created") }
            _ = try KeyVault.open(at: directory, key: .passphrase("x", scrypt: fast))
        },
        Attack("vault: directory open to others", "insecurePermissions") { context in
            let (directory, _) = try newVault(context)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
            _ = try KeyVault.open(at: directory, key: .keyFile(context.keyFile))
        },
        Attack("vault: a record edited on disk", "corruptRecord") { context in
            let (directory, vault) = try newVault(context)
            let entry = try vault.createKey(.es256, metadata: Data("{}".utf8))
            let file = directory.appendingPathComponent("keys/\(entry.handle).json")
            // One character of the sealed details changed; the file stays well-formed.
            var text = Array(try String(contentsOf: file, encoding: .utf8))
            let start = try #require(String(text).range(of: "\"details\":\""))
            let index = String(text).distance(from: String(text).startIndex, to: start.upperBound) + 20
            text[index] = text[index] == "A" ? "B" : "A"
            try String(text).write(to: file, atomically: false, encoding: .utf8)
            _ = try KeyVault.open(at: directory, key: .keyFile(context.keyFile)).entry(entry.handle)
        },
        Attack("vault: one record copied over another", "corruptRecord") { context in
            let (directory, vault) = try newVault(context)
            let first = try vault.createKey(.es256, metadata: Data("{}".utf8))
            let second = try vault.createKey(.es256, metadata: Data("{}".utf8))
            let keys = directory.appendingPathComponent("keys")
            try FileManager.default.removeItem(at: keys.appendingPathComponent("\(second.handle).json"))
            try FileManager.default.copyItem(at: keys.appendingPathComponent("\(first.handle).json"), to: keys.appendingPathComponent("\(second.handle).json"))
            _ = try KeyVault.open(at: directory, key: .keyFile(context.keyFile)).entry(second.handle)
        },
        Attack("vault: a symlinked record", "insecurePermissions") { context in
            let (directory, vault) = try newVault(context)
            let first = try vault.createKey(.es256, metadata: Data("{}".utf8))
            let second = try vault.createKey(.es256, metadata: Data("{}".utf8))
            let keys = directory.appendingPathComponent("keys")
            try FileManager.default.removeItem(at: keys.appendingPathComponent("\(second.handle).json"))
            try FileManager.default.createSymbolicLink(at: keys.appendingPathComponent("\(second.handle).json"), withDestinationURL: keys.appendingPathComponent("\(first.handle).json"))
            _ = try KeyVault.open(at: directory, key: .keyFile(context.keyFile)).entry(second.handle)
        },
        Attack("vault: a header from a newer format", "unsupportedFormat") { context in
            let (directory, _) = try newVault(context)
            let header = directory.appendingPathComponent("vault.json")
            // The header's format number (a flat JSON object the vault wrote) set to 99.
            let text = try String(contentsOf: header, encoding: .utf8)
            let newer = text.replacingOccurrences(of: #""format"\s*:\s*[0-9]+"#, with: #""format":99"#, options: .regularExpression)
            try #require(newer != text, "the header has a format member")
            try newer.write(to: header, atomically: false, encoding: .utf8)
            _ = try KeyVault.open(at: directory, key: .keyFile(context.keyFile))
        },
        Attack("vault: metadata over 64 KiB", "metadataTooLarge") { context in
            _ = try newVault(context).1.createKey(.es256, metadata: Data(count: KeyVault.maximumMetadataByteCount + 1))
        },
        Attack("vault: a key file of the wrong size", "keySourceUnavailable") { context in
            let short = context.directory.appendingPathComponent("short-\(UUID().uuidString).key")
            _ = FileManager.default.createFile(atPath: short.path, contents: Data(count: 16), attributes: [.posixPermissions: 0o600])
            _ = try KeyVault.open(at: context.directory.appendingPathComponent("k-\(UUID().uuidString)"), key: .keyFile(short))
        },
        Attack("vault: a key that does not exist (path traversal is not even a handle)", "keyNotFound") { context in
            #expect(KeyHandle(rawValue: "../../etc/passwd") == nil)
            _ = try newVault(context).1.entry(try #require(KeyHandle(rawValue: String(repeating: "0", count: 32))))
        },
    ]

    @Test("each attack is refused with its own code", arguments: crypto + vault)
    func refuse(_ attack: Attack) async throws {
        do {
            try await attack.run(try Context())
            Issue.record("\(attack.name): accepted")
        } catch {
            let code: String = switch error {
            case let error as KeyVaultError: "\(error.code)"
            case let error as CryptoError: "\(error.code)"
            default: "untyped: \(error)"
            }
            #expect(code == attack.expected, "\(attack.name): \(error)")
        }
    }
}
