import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

/// OpenSSH's own formats (`PROTOCOL.certkeys`, `PROTOCOL.krl`, RFC 4253 §6.6, RFC 5656
/// §3.1, RFC 8709) written by the crypto core and read back by OpenSSH's `ssh-keygen`,
/// and the other way round: keys and certificates `ssh-keygen` made, read by the core.
@Suite("SSH formats: keys, signatures, certificates and revocation lists, checked against ssh-keygen")
struct SSHFormatTests {
    static let keygen = URL(fileURLWithPath: "/usr/bin/ssh-keygen")

    static func keygen(_ arguments: [String]) async throws -> ChildProcess.Output {
        try #require(FileManager.default.isExecutableFile(atPath: keygen.path), "ssh-keygen is missing (.ci/run installs openssh-server)")
        return try await ChildProcess.run(keygen, arguments)
    }

    /// A key pair `ssh-keygen` made: its `.pub` line and the path of its private key.
    static func opensshKey(_ type: String, in directory: TemporaryDirectory, name: String) async throws -> (line: String, path: String) {
        let path = directory.url.appendingPathComponent(name).path
        let bits = type == "ecdsa" ? ["-b", "256"] : []
        let made = try await keygen(["-q", "-t", type] + bits + ["-N", "", "-C", "made by ssh-keygen", "-f", path])
        try #require(made.status == 0, "\(made.stderr)")
        return (try String(contentsOfFile: path + ".pub", encoding: .utf8), path)
    }

    /// `ssh-keygen -L -f` of `line`, written to a file.
    static func describe(_ line: String, in directory: TemporaryDirectory) async throws -> String {
        let file = directory.url.appendingPathComponent("described-\(UUID().uuidString)-cert.pub")
        try Data((line + "\n").utf8).write(to: file)
        let described = try await keygen(["-L", "-f", file.path])
        try #require(described.status == 0, "ssh-keygen -L refused it: \(described.stderr)")
        return described.stdout
    }

    @Test("keys ssh-keygen made read back with its fingerprint and line; keys the core made, ssh-keygen reads with ours", arguments: ["ecdsa", "ed25519"])
    func publicKeys(type: String) async throws {
        let directory = try TemporaryDirectory()
        let (line, path) = try await Self.opensshKey(type, in: directory, name: "key")
        let key = try SSHPublicKey(openSSHLine: line)
        let listed = try await Self.keygen(["-l", "-E", "sha256", "-f", path + ".pub"])
        #expect(listed.stdout.split(separator: " ").dropFirst().first.map(String.init) == key.fingerprint)
        #expect(key.openSSHLine(comment: "made by ssh-keygen") == line.trimmingCharacters(in: .newlines))

        let ours = try SSHPublicKey(try SigningKey.generate(type == "ecdsa" ? .es256 : .ed25519).publicKey)
        let file = directory.url.appendingPathComponent("ours.pub")
        try Data((ours.openSSHLine(comment: "latchkey") + "\n").utf8).write(to: file)
        let read = try await Self.keygen(["-l", "-E", "sha256", "-f", file.path])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains(ours.fingerprint) && read.stdout.contains(type == "ecdsa" ? "(ECDSA)" : "(ED25519)"), "\(read.stdout)")
    }

    @Test(
        "a certificate the core issues is what ssh-keygen -L shows: type, CA, key id, serial, validity, principals, options and extensions",
        arguments: [(SigningAlgorithm.es256, "ecdsa"), (.ed25519, "ed25519"), (.es256, "ed25519"), (.ed25519, "ecdsa")]
    )
    func issuedCertificate(authority: SigningAlgorithm, keyType: String) async throws {
        let directory = try TemporaryDirectory()
        let ca = try SigningKey.generate(authority)
        let key = try SSHPublicKey(openSSHLine: try await Self.opensshKey(keyType, in: directory, name: "user").line)
        let start = UInt64(Date().timeIntervalSince1970) - 60
        let certificate = try SSHCertificate.issue(
            for: key, serial: 0xFEED_0000_0001, kind: .user, keyID: "latchkey:ada:cred:281470681743361", principals: ["ada", "deploy"],
            validAfter: start, validBefore: start + 8 * 3600,
            criticalOptions: [.init("source-address", "10.0.0.0/8,127.0.0.1"), .init("force-command", "/usr/bin/true")],
            extensions: SSHCertificate.standardUserExtensions.reversed(), by: ca
        )
        #expect(certificate.isSignatureValid)
        let shown = try await Self.describe(certificate.openSSHLine(), in: directory)
        let caKey = try SSHPublicKey(ca.publicKey)
        #expect(shown.contains("Type: \(key.algorithm.certificateType) user certificate"), "\(shown)")
        #expect(shown.contains("Signing CA: \(authority == .es256 ? "ECDSA" : "ED25519") \(caKey.fingerprint) (using \(caKey.algorithm.rawValue))"), "\(shown)")
        #expect(shown.contains("Key ID: \"latchkey:ada:cred:281470681743361\"") && shown.contains("Serial: \(0xFEED_0000_0001 as UInt64)"), "\(shown)")
        #expect(shown.contains("Principals: \n                ada\n                deploy\n"), "\(shown)")
        #expect(shown.contains("force-command /usr/bin/true") && shown.contains("source-address 10.0.0.0/8,127.0.0.1"), "\(shown)")
        for name in SSHCertificate.standardUserExtensions.map(\.name) { #expect(shown.contains("                \(name)\n")) }
        let window = DateFormatter()
        window.locale = Locale(identifier: "en_US_POSIX")
        window.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        let from = window.string(from: Date(timeIntervalSince1970: TimeInterval(start)))
        let to = window.string(from: Date(timeIntervalSince1970: TimeInterval(start + 8 * 3600)))
        #expect(shown.contains("Valid: from \(from) to \(to)"), "\(shown)")
        // Read back, the same fields.
        let read = try SSHCertificate(openSSHLine: certificate.openSSHLine(comment: "x"))
        #expect(read == certificate && read.principals == ["ada", "deploy"] && read.serial == 0xFEED_0000_0001 && read.kind == .user)
        #expect(read.criticalOptions.map(\.name) == ["force-command", "source-address"] && read.signatureKey == caKey && read.publicKey == key)
    }

    @Test("a certificate ssh-keygen -s signs reads back with its fields and a signature that holds; one changed byte does not", arguments: ["ecdsa", "ed25519"])
    func opensshCertificate(caType: String) async throws {
        let directory = try TemporaryDirectory()
        let (caLine, caPath) = try await Self.opensshKey(caType, in: directory, name: "ca")
        let (_, userPath) = try await Self.opensshKey("ed25519", in: directory, name: "user")
        let signed = try await Self.keygen(["-q", "-s", caPath, "-I", "made-by-openssh", "-n", "root,ada", "-O", "force-command=ls", "-V", "-5m:+1h", "-z", "77", userPath + ".pub"])
        try #require(signed.status == 0, "\(signed.stderr)")
        let certificate = try SSHCertificate(openSSHLine: try String(contentsOfFile: userPath + "-cert.pub", encoding: .utf8))
        #expect(certificate.isSignatureValid)
        #expect(certificate.signatureKey == (try SSHPublicKey(openSSHLine: caLine)))
        #expect(certificate.serial == 77 && certificate.keyID == "made-by-openssh" && certificate.principals == ["root", "ada"])
        #expect(certificate.criticalOptions == [.init("force-command", "ls")] && certificate.extensions.count == 5)
        #expect(certificate.isValid(at: Date()) && !certificate.isValid(at: Date().addingTimeInterval(7200)))
        // One bit of the nonce changed: still a certificate, no longer the CA's.
        var blob = certificate.wireBlob
        blob[blob.startIndex + 4 + certificate.certificateType.utf8.count + 4] ^= 1
        let forged = try SSHCertificate(wireBlob: blob)
        #expect(forged.serial == 77 && forged.nonce != certificate.nonce && !forged.isSignatureValid)
    }

    @Test("a revocation list the core writes is what ssh-keygen -Q reads: revoked serials and keys REVOKED, others ok")
    func revocationList() async throws {
        let directory = try TemporaryDirectory()
        let ca = try SigningKey.generate(.es256)
        let caKey = try SSHPublicKey(ca.publicKey)
        var certificates: [UInt64: URL] = [:]
        for serial: UInt64 in [5, 6, 7, 9, 12, 40] {
            let key = try SSHPublicKey(try SigningKey.generate(.ed25519).publicKey)
            let now = UInt64(Date().timeIntervalSince1970)
            let certificate = try SSHCertificate.issue(
                for: key, serial: serial, kind: .user, keyID: "k\(serial)", principals: ["ada"], validAfter: now - 60, validBefore: now + 3600, by: ca
            )
            let file = directory.url.appendingPathComponent("c\(serial)-cert.pub")
            try Data((certificate.openSSHLine() + "\n").utf8).write(to: file)
            certificates[serial] = file
        }
        let plain = try SSHPublicKey(try SigningKey.generate(.es256).publicKey)
        let plainFile = directory.url.appendingPathComponent("plain.pub")
        try Data((plain.openSSHLine() + "\n").utf8).write(to: plainFile)
        let otherFile = directory.url.appendingPathComponent("other.pub")
        try Data((try SSHPublicKey(try SigningKey.generate(.es256).publicKey).openSSHLine() + "\n").utf8).write(to: otherFile)

        let list = SSHKeyRevocationList(
            version: 3, generatedAt: UInt64(Date().timeIntervalSince1970), comment: "latchkey test",
            revokedSerials: [caKey: [5, 6, 7, 12], try SSHPublicKey(try SigningKey.generate(.ed25519).publicKey): [40]], revokedKeys: [plain]
        )
        let file = directory.url.appendingPathComponent("krl")
        try list.wireBlob.write(to: file)
        for (serial, certificate) in certificates.sorted(by: { $0.key < $1.key }) {
            let queried = try await Self.keygen(["-Q", "-f", file.path, certificate.path])
            let revoked = [5, 6, 7, 12].contains(serial)
            #expect(queried.status == (revoked ? 1 : 0) && queried.stdout.contains(revoked ? "REVOKED" : "ok"), "serial \(serial): \(queried.stdout) \(queried.stderr)")
        }
        #expect(try await Self.keygen(["-Q", "-f", file.path, plainFile.path]).status == 1)
        #expect(try await Self.keygen(["-Q", "-f", file.path, otherFile.path]).status == 0)
    }

    @Test("hostile SSH wire data: every truncation, forged lengths, other key types and oversized blobs are typed errors, never a crash")
    func hostileWireData() async throws {
        let ca = try SigningKey.generate(.es256)
        let key = try SSHPublicKey(try SigningKey.generate(.ed25519).publicKey)
        let certificate = try SSHCertificate.issue(for: key, serial: 1, kind: .user, keyID: "k", principals: ["ada"], validAfter: 1, validBefore: 2, by: ca)
        for length in 0..<certificate.wireBlob.count {
            #expect(throws: CryptoError.self, "truncated to \(length)") { try SSHCertificate(wireBlob: certificate.wireBlob.prefix(length)) }
        }
        for length in 0..<key.wireBlob.count {
            #expect(throws: CryptoError.self, "truncated to \(length)") { try SSHPublicKey(wireBlob: key.wireBlob.prefix(length)) }
        }
        // A length of 4 GiB - 1 where the key type's length goes.
        var forged = key.wireBlob
        forged.replaceSubrange(forged.startIndex..<forged.startIndex + 4, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: CryptoError.self) { try SSHPublicKey(wireBlob: forged) }
        #expect(throws: CryptoError.self) { try SSHCertificate(wireBlob: Data(count: SSHCertificate.maximumBlobLength + 1)) }
        #expect(throws: CryptoError.self) { try SSHCertificate(wireBlob: certificate.wireBlob + Data([0])) }

        let directory = try TemporaryDirectory()
        for type in ["rsa", "dsa", "ecdsa-384"] {
            let arguments = type == "ecdsa-384" ? ["-t", "ecdsa", "-b", "384"] : type == "rsa" ? ["-t", "rsa", "-b", "2048"] : ["-t", "dsa"]
            let path = directory.url.appendingPathComponent(type).path
            let made = try await Self.keygen(["-q"] + arguments + ["-N", "", "-f", path])
            guard made.status == 0 else { continue }  // DSA is gone from newer OpenSSH
            let refused = #expect(throws: CryptoError.self) { try SSHPublicKey(openSSHLine: try String(contentsOfFile: path + ".pub", encoding: .utf8)) }
            #expect(refused?.code == .unsupportedAlgorithm, "\(type)")
        }
        // A line naming one type and holding another; a line with options before the key.
        let swapped = "ecdsa-sha2-nistp256 " + key.wireBlob.base64EncodedString()
        #expect(throws: CryptoError.self) { try SSHPublicKey(openSSHLine: swapped) }
        #expect(throws: CryptoError.self) { try SSHPublicKey(openSSHLine: "from=\"10.0.0.1\" " + key.openSSHLine()) }
        #expect(throws: CryptoError.self) { try SSHPublicKey(openSSHLine: key.openSSHLine() + String(repeating: " x", count: 5000)) }

        for principal in ["ada,root", "ada\nroot", "ada\u{0}", "", "a b", "\"ada\"", String(repeating: "a", count: 300)] {
            #expect(!SSHCertificate.isAcceptablePrincipal(principal), "\(principal.debugDescription)")
            #expect(throws: CryptoError.self) {
                try SSHCertificate.issue(for: key, serial: 1, kind: .user, keyID: "k", principals: [principal], validAfter: 1, validBefore: 2, by: ca)
            }
        }
        #expect(SSHCertificate.isAcceptablePrincipal("ada.lovelace@example.com") && SSHCertificate.isAcceptablePrincipal("web-01.example.com"))
    }
}
