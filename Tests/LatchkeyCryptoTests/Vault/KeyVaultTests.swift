import Foundation
@testable import LatchkeyCrypto
import Testing
import LatchkeyTestSupport

/// The key vault with real files in a temporary directory. Serialized: some cases set
/// `CREDENTIALS_DIRECTORY`, which is process-wide.
@Suite("Key vault", .serialized)
struct KeyVaultTests {
    /// Regression: listing copied each `dirent`'s whole 256-byte name field, reading past
    /// a short last record (AddressSanitizer: heap-buffer-overflow in the vault-stress
    /// helper). Names of every length, UTF-8 included, come back whole.
    @Test("directory listing reads names of every length in place")
    func directoryNames() throws {
        let temporary = try TemporaryDirectory()
        var expected: Set<String> = []
        for length in [1, 2, 7, 8, 9, 63, 64, 65, 127, 200, 255] {
            let name = String(repeating: "n", count: length - 1) + (length.isMultiple(of: 2) ? "x" : "y")
            expected.insert(name)
            #expect(FileManager.default.createFile(atPath: temporary.url.appendingPathComponent(name).path, contents: Data()))
        }
        let accented = "clé-\u{1F511}"
        expected.insert(accented)
        #expect(FileManager.default.createFile(atPath: temporary.url.appendingPathComponent(accented).path, contents: Data()))
        #expect(Set(try VaultFiles.names(in: temporary.url.path)) == expected)
    }

    /// Regression (found by the soak): a process killed while creating a vault, after
    /// writing the header's temporary file and before renaming it, left a directory that
    /// every later open refused as "not a vault". Nothing was stored in it, so the next
    /// open cleans up and creates the vault.
    @Test("a vault whose creation was killed before the header's rename is created on the next open")
    func interruptedCreation() throws {
        let temporary = try TemporaryDirectory()
        let path = temporary.vault.path
        try FileManager.default.createDirectory(atPath: path + "/keys", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        chmod(path, 0o700)
        #expect(FileManager.default.createFile(atPath: path + "/.lock", contents: Data(), attributes: [.posixPermissions: 0o600]))
        #expect(FileManager.default.createFile(atPath: path + "/.tmp-0123456789abcdef", contents: Data("{\"form".utf8), attributes: [.posixPermissions: 0o600]))
        let key = try temporary.keyFile()
        let vault = try KeyVault.open(at: temporary.vault, key: .keyFile(key))
        _ = try vault.createKey(.es256, metadata: Data())
        #expect(try VaultFiles.names(in: path).sorted() == [".lock", "keys", "vault.json"])
        // Anything else in the directory still makes it "not a vault".
        let other = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: other.vault.path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(FileManager.default.createFile(atPath: other.vault.path + "/notes.txt", contents: Data()))
        #expect(throws: KeyVaultError.notAVault(reason: "")) { try KeyVault.open(at: other.vault, key: .keyFile(key)) }
    }

    @Test("create, list, sign, update, delete")
    func roundTrip() throws {
        let temporary = try TemporaryDirectory()
        let vault = try KeyVault.open(at: temporary.vault, key: .keyFile(temporary.keyFile()))
        let first = try vault.createKey(.es256, metadata: Data("one".utf8))
        let second = try vault.createKey(.ed25519, metadata: Data("two".utf8))
        #expect(try vault.entries().map(\.handle) == [first.handle, second.handle])
        #expect(try vault.entry(first.handle) == first)
        #expect(first.algorithm == .es256 && second.algorithm == .ed25519)

        for entry in [first, second] {
            let signature = try vault.sign(Data("challenge".utf8), with: entry.handle)
            #expect(entry.publicKey.isValidSignature(signature, for: Data("challenge".utf8)))
        }

        let updated = try vault.updateMetadata(first.handle) { $0.append(contentsOf: Data(" more".utf8)) }
        #expect(updated.metadata == Data("one more".utf8))
        #expect(updated.createdAt == first.createdAt && updated.updatedAt >= first.updatedAt)
        #expect(try vault.entry(first.handle).metadata == Data("one more".utf8))

        try vault.deleteKey(first.handle)
        #expect(try vault.entries().map(\.handle) == [second.handle])
        #expect(throws: KeyVaultError.keyNotFound(reason: "")) { try vault.entry(first.handle) }
        #expect(throws: KeyVaultError.keyNotFound(reason: "")) { try vault.sign(Data(), with: first.handle) }
        #expect(throws: KeyVaultError.keyNotFound(reason: "")) { try vault.deleteKey(first.handle) }
        #expect(throws: KeyVaultError.keyNotFound(reason: "")) { try vault.updateMetadata(first.handle) { _ in } }
    }

    @Test("reopen with a passphrase, a key file and a systemd credential")
    func reopenWithEachSource() throws {
        let temporary = try TemporaryDirectory()
        let keyFile = try temporary.keyFile()
        let credentials = temporary.url.appendingPathComponent("credentials")
        try FileManager.default.createDirectory(at: credentials, withIntermediateDirectories: true)
        _ = try temporary.keyFile("credentials/latchkey-vault", bytes: Data(contentsOf: keyFile))

        let sources: [(String, VaultKeySource, VaultKeySource)] = [
            ("passphrase", VaultFixtures.passphrase(), VaultFixtures.passphrase()),
            ("key file", .keyFile(keyFile), .keyFile(keyFile)),
            // Made with the key file, reopened through systemd: the same 32 bytes.
            ("systemd credential", .keyFile(keyFile), .systemdCredential(name: "latchkey-vault")),
        ]
        try VaultKeySource.$credentialsDirectory.withValue(credentials.path) {
            for (name, create, reopen) in sources {
                let directory = temporary.url.appendingPathComponent(name.replacingOccurrences(of: " ", with: "-"))
                let entry = try KeyVault.open(at: directory, key: create).createKey(.es256, metadata: Data(name.utf8))
                let reopened = try KeyVault.open(at: directory, key: reopen)
                #expect(try reopened.entries() == [entry], "\(name)")
                // A fresh instance has nothing cached: this unseals the key from disk.
                let signature = try reopened.sign(Data("m".utf8), with: entry.handle)
                #expect(entry.publicKey.isValidSignature(signature, for: Data("m".utf8)), "\(name)")
            }
        }
    }

    @Test("a wrong passphrase or key is reported as such; mismatched and missing sources too")
    func wrongKeys() throws {
        let temporary = try TemporaryDirectory()
        let passphraseVault = temporary.url.appendingPathComponent("p")
        _ = try KeyVault.open(at: passphraseVault, key: VaultFixtures.passphrase("the right passphrase"))
        #expect(throws: KeyVaultError.wrongKey(reason: "")) { try KeyVault.open(at: passphraseVault, key: VaultFixtures.passphrase("a wrong passphrase")) }
        #expect(throws: KeyVaultError.keySourceMismatch(reason: "")) { try KeyVault.open(at: passphraseVault, key: .keyFile(temporary.keyFile())) }

        let keyVault = temporary.url.appendingPathComponent("k")
        _ = try KeyVault.open(at: keyVault, key: .keyFile(temporary.keyFile("a.key")))
        #expect(throws: KeyVaultError.wrongKey(reason: "")) { try KeyVault.open(at: keyVault, key: .keyFile(temporary.keyFile("b.key"))) }
        #expect(throws: KeyVaultError.keySourceUnavailable(reason: "")) {
            try KeyVault.open(at: keyVault, key: .keyFile(temporary.keyFile("short.key", bytes: Data(count: 31))))
        }
        #expect(throws: KeyVaultError.keySourceUnavailable(reason: "")) {
            try KeyVault.open(at: keyVault, key: .keyFile(temporary.url.appendingPathComponent("missing.key")))
        }
        VaultKeySource.$credentialsDirectory.withValue("") {
            #expect(throws: KeyVaultError.keySourceUnavailable(reason: "")) {
                try KeyVault.open(at: keyVault, key: .systemdCredential(name: "latchkey"))
            }
        }
    }

    @Test("loose permissions on the directory, a record, the header or the key file are refused")
    func loosePermissions() throws {
        let temporary = try TemporaryDirectory()
        let keyFile = try temporary.keyFile()
        let vault = try KeyVault.open(at: temporary.vault, key: .keyFile(keyFile))
        let entry = try vault.createKey(.es256, metadata: Data())
        let targets: [(String, String, mode_t, mode_t)] = [
            ("directory", temporary.vault.path, 0o755, 0o700),
            ("keys directory", temporary.vault.path + "/keys", 0o750, 0o700),
            ("record", VaultFixtures.recordPath(vault, entry.handle), 0o644, 0o600),
            ("header", temporary.vault.path + "/vault.json", 0o640, 0o600),
            ("key file", keyFile.path, 0o644, 0o600),
        ]
        for (name, path, loose, tight) in targets {
            chmod(path, loose)
            do {
                _ = try KeyVault.open(at: temporary.vault, key: .keyFile(keyFile))
                Issue.record("\(name) with mode \(String(loose, radix: 8)) was accepted")
            } catch let error as KeyVaultError {
                #expect(error.code == .insecurePermissions, "\(name)")
                #expect(error.reason.contains(path) && error.reason.contains("chmod"), "\(name): \(error.reason)")
            }
            chmod(path, tight)
        }
        #expect(throws: Never.self) { try KeyVault.open(at: temporary.vault, key: .keyFile(keyFile)) }
    }

    @Test("tampered, swapped, truncated, empty and future records are reported by handle; the rest still list")
    func damagedRecords() throws {
        let temporary = try TemporaryDirectory()
        let keyFile = try temporary.keyFile()
        let vault = try KeyVault.open(at: temporary.vault, key: .keyFile(keyFile))
        let entries = try (0..<7).map { try vault.createKey(.es256, metadata: Data("key \($0)".utf8)) }
        let paths = entries.map { VaultFixtures.recordPath(vault, $0.handle) }
        func rewrite(_ index: Int, _ change: (inout Data) -> Void) throws {
            var data = try Data(contentsOf: URL(fileURLWithPath: paths[index]))
            change(&data)
            try data.write(to: URL(fileURLWithPath: paths[index]))
            chmod(paths[index], 0o600)
        }
        // 0: the sealed details edited by hand (still valid base64url, other bytes).
        try rewrite(0) { data in data = VaultFixtures.editingDetails(data) }
        // 1: record 2's bytes under record 1's name (swapped).
        try rewrite(1) { data in data = (try? Data(contentsOf: URL(fileURLWithPath: paths[2]))) ?? Data() }
        // 3: truncated. 4: empty. 5: a future format.
        try rewrite(3) { data in data = data.prefix(data.count / 2) }
        try rewrite(4) { data in data = Data() }
        try rewrite(5) { data in
            data = Data(String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\"format\":2", with: "\"format\":3").utf8)
        }

        let reopened = try KeyVault.open(at: temporary.vault, key: .keyFile(keyFile))
        let scan = try reopened.scan()
        #expect(Set(scan.entries.map(\.handle)) == [entries[2].handle, entries[6].handle])
        let problems = Dictionary(uniqueKeysWithValues: scan.problems.compactMap { problem in problem.handle.map { ($0, problem.code) } })
        #expect(problems[entries[0].handle] == .corruptRecord)
        #expect(problems[entries[1].handle] == .corruptRecord)
        #expect(problems[entries[3].handle] == .corruptRecord)
        #expect(problems[entries[4].handle] == .corruptRecord)
        #expect(problems[entries[5].handle] == .unsupportedFormat)
        #expect(try reopened.entries().count == 2)
        #expect(throws: KeyVaultError.corruptRecord(reason: "")) { try reopened.sign(Data(), with: entries[0].handle) }
        // Nothing was rewritten or deleted behind the caller's back.
        #expect(FileManager.default.fileExists(atPath: paths[4]))
        #expect((try? Data(contentsOf: URL(fileURLWithPath: paths[4])))?.isEmpty == true)
    }

    @Test("a vault header from a newer format, or a directory of other things, is refused")
    func refusedVaults() throws {
        let temporary = try TemporaryDirectory()
        let keyFile = try temporary.keyFile()
        _ = try KeyVault.open(at: temporary.vault, key: .keyFile(keyFile))
        let header = temporary.vault.appendingPathComponent("vault.json")
        let text = try String(contentsOf: header, encoding: .utf8).replacingOccurrences(of: "\"format\" : 2", with: "\"format\" : 7")
        try text.write(to: header, atomically: false, encoding: .utf8)
        chmod(header.path, 0o600)
        #expect(throws: KeyVaultError.unsupportedFormat(reason: "")) { try KeyVault.open(at: temporary.vault, key: .keyFile(keyFile)) }

        let other = temporary.url.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        chmod(other.path, 0o700)
        try Data("x".utf8).write(to: other.appendingPathComponent("notes.txt"))
        #expect(throws: KeyVaultError.notAVault(reason: "")) { try KeyVault.open(at: other, key: .keyFile(keyFile)) }
    }

    @Test("no file in the vault holds a private key in clear, raw or encoded")
    func noPrivateKeyOnDisk() throws {
        let temporary = try TemporaryDirectory()
        let vault = try KeyVault.open(at: temporary.vault, key: VaultFixtures.passphrase())
        var secrets: [(String, Data)] = []
        for algorithm in [SigningAlgorithm.es256, .ed25519, .es256, .ed25519] {
            let entry = try vault.createKey(algorithm, metadata: Data("m".utf8))
            let der = try #require(try vault.signingKey(entry.handle).software).pkcs8DERRepresentation
            // The private scalar or seed is the 32 bytes after OCTET STRING (04 20): in the
            // SEC1 ECPrivateKey for P-256 (RFC 5915), in CurvePrivateKey for Ed25519 (RFC 8410).
            guard let marker = der.range(of: Data([0x04, 0x20])) else { throw TestDataError("no key octets in PKCS#8") }
            let scalar = der[marker.upperBound..<marker.upperBound + 32]
            for (name, value) in [("PKCS#8", der), ("scalar", Data(scalar))] {
                secrets.append(("\(name) raw", value))
                secrets.append(("\(name) hex", Data(value.hex.utf8)))
                secrets.append(("\(name) base64url", Data(Base64URL.encode(value).utf8)))
                secrets.append(("\(name) base64", Data(value.base64EncodedString().utf8)))
            }
        }
        let files = VaultFixtures.allFiles(under: temporary.vault)
        #expect(files.count >= 5)
        for file in files {
            let contents = try Data(contentsOf: file)
            for (name, secret) in secrets {
                #expect(!contents.contains(secret), "\(file.lastPathComponent) holds a \(name)")
            }
        }
    }

    @Test("concurrent metadata updates in one process lose nothing")
    func concurrentUpdates() async throws {
        let temporary = try TemporaryDirectory()
        let vault = try KeyVault.open(at: temporary.vault, key: .keyFile(temporary.keyFile()))
        let handle = try vault.createKey(.es256, metadata: Data("0".utf8)).handle
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<10 {
                        try vault.updateMetadata(handle) { data in
                            data = Data(String((Int(String(decoding: data, as: UTF8.self)) ?? -1000) + 1).utf8)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try vault.entry(handle).metadata == Data("40".utf8))
    }

    @Test("leftover temporary files are removed on open and never listed; bad handles and oversized metadata are refused")
    func strayFilesAndBounds() throws {
        let temporary = try TemporaryDirectory()
        let keyFile = try temporary.keyFile()
        let vault = try KeyVault.open(at: temporary.vault, key: .keyFile(keyFile))
        let entry = try vault.createKey(.ed25519, metadata: Data())
        let stray = temporary.vault.path + "/keys/.tmp-0123456789abcdef0123456789abcdef"
        try Data(contentsOf: URL(fileURLWithPath: VaultFixtures.recordPath(vault, entry.handle)))
            .prefix(40).write(to: URL(fileURLWithPath: stray))
        chmod(stray, 0o600)
        #expect(try vault.entries().map(\.handle) == [entry.handle])
        _ = try KeyVault.open(at: temporary.vault, key: .keyFile(keyFile))
        #expect(!FileManager.default.fileExists(atPath: stray))

        #expect(KeyHandle(rawValue: "../../etc/passwd") == nil)
        #expect(KeyHandle(rawValue: String(repeating: "A", count: 32)) == nil)
        #expect(KeyHandle(rawValue: entry.handle.rawValue) == entry.handle)
        #expect(throws: KeyVaultError.metadataTooLarge(reason: "")) {
            try vault.createKey(.es256, metadata: Data(count: KeyVault.maximumMetadataByteCount + 1))
        }
        #expect(throws: KeyVaultError.metadataTooLarge(reason: "")) {
            try vault.updateMetadata(entry.handle) { $0 = Data(count: KeyVault.maximumMetadataByteCount + 1) }
        }
        #expect(try vault.entry(entry.handle).metadata.isEmpty)
    }
}

@Suite("Vault record parsing")
struct VaultRecordParsingTests {
    @Test("an Ed25519 key in the TPM is refused before any TPM is asked; nothing is written")
    func ed25519InTPMRefused() throws {
        let temporary = try TemporaryDirectory()
        let vault = try KeyVault.open(at: temporary.vault, key: VaultFixtures.passphrase())
        let error = #expect(throws: KeyVaultError.self) { try vault.createKey(.ed25519, metadata: Data(), protection: .tpm) }
        #expect(error?.code == .unsupportedProtection && error?.reason.contains("ES256") == true, "\(String(describing: error))")
        #expect(try vault.entries().isEmpty)
    }

    @Test("the flat JSON parser takes any valid spacing and escapes, and refuses everything else")
    func flatJSON() throws {
        let spaced = try FlatJSONObject(parsing: Data(" {\n \"a\" : \"x\\u0041\\n\" ,\"b\":-1.5e2 } \n".utf8))
        #expect(spaced.string("a") == "xA\n" && spaced.number("b") == -150)
        let refused = [
            "", "{", "}", "[]", "{\"a\":1,}", "{\"a\":1}{}", "{\"a\":1} x", "{\"a\":{}}", "{\"a\":[1]}", "{\"a\":true}",
            "{\"a\":1,\"a\":2}", "{\"a\":\"\\q\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"unterminated}", "{\"a\":1e999}",
            "{\"a\":\"tab\there\"}", "{a:1}", String(repeating: "{", count: 10_000),
        ]
        for text in refused {
            #expect(throws: FlatJSONObject.Malformed.self, "\(text.prefix(20))") { try FlatJSONObject(parsing: Data(text.utf8)) }
        }
    }

    @Test("a header with out-of-bounds scrypt parameters is refused before any work")
    func hostileHeader() throws {
        let temporary = try TemporaryDirectory()
        _ = try KeyVault.open(at: temporary.vault, key: VaultFixtures.passphrase())
        let header = temporary.vault.appendingPathComponent("vault.json")
        let text = try String(contentsOf: header, encoding: .utf8)
            .replacingOccurrences(of: "\"costFactor\" : 1024", with: "\"costFactor\" : 1099511627776")
        try text.write(to: header, atomically: false, encoding: .utf8)
        chmod(header.path, 0o600)
        #expect(throws: KeyVaultError.notAVault(reason: "")) { try KeyVault.open(at: temporary.vault, key: VaultFixtures.passphrase()) }
    }
}
