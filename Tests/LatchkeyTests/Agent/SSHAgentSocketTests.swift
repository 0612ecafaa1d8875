import Foundation
import Glibc
@testable import Latchkey
import LatchkeyCrypto
import LatchkeyTestSupport
import Logging
import Testing

/// The agent's ssh-agent socket abused (docs/SECURITY.md, "The key agent"; RFC 9987):
/// oversized and malformed messages, keys added from outside, a locked agent, and a
/// process of another user.
@Suite("Key agent: the ssh-agent socket against hostile peers", .serialized)
struct SSHAgentSocketTests {
    struct Served {
        let agent: KeyAgent
        let scratch: TemporaryDirectory
        let socket: String
        let key: SSHPublicKey
        let certificate: SSHCertificate
    }

    /// An agent whose vault holds one SSH key with a live certificate.
    /// `socketDirectory`: where the ssh-agent socket goes (default: the scratch directory).
    static func serve(socketDirectory: URL? = nil) async throws -> Served {
        let scratch = try TemporaryDirectory()
        let keyFile = try scratch.keyFile()
        let directory = scratch.url.appendingPathComponent("vault")
        let vault = try KeyVault.open(at: directory, key: .keyFile(keyFile))
        let entry = try vault.createKey(.ed25519, metadata: try SSHKeyRecord(issuer: "https://id.example.com").encoded())
        let key = try SSHPublicKey(entry.publicKey)
        let now = UInt64(Date().timeIntervalSince1970)
        let certificate = try SSHCertificate.issue(
            for: key, serial: 9, kind: .user, keyID: "test", principals: ["ada"], validAfter: now - 60, validBefore: now + 3600, by: try SigningKey.generate(.es256)
        )
        _ = try vault.updateMetadata(entry.handle) { $0 = try SSHKeyRecord(issuer: "https://id.example.com", certificate: certificate.openSSHLine()).encoded() }
        var configuration = KeyAgent.Configuration(vaultDirectory: directory, reopenSource: .keyFile(keyFile), logger: Logger(label: "ssh-agent-socket-test"))
        configuration.idleTimeout = nil
        let agent = try KeyAgent(configuration: configuration, openingWith: .keyFile(keyFile))
        _ = try agent.listen(at: scratch.url.appendingPathComponent("agent.sock").path, environment: [:])
        let socket = try agent.listenSSH(at: (socketDirectory ?? scratch.url).appendingPathComponent("ssh-agent.sock").path, environment: [:])
        Blocking.detached { await agent.serve() }
        return Served(agent: agent, scratch: scratch, socket: socket, key: key, certificate: certificate)
    }

    /// A raw ssh-agent client: length-prefixed messages out, the next message in.
    final class RawSSHClient: @unchecked Sendable {
        let client: KeyAgentTests.RawClient

        init(_ path: String) throws { client = try KeyAgentTests.RawClient(path) }

        func send(_ type: UInt8, _ body: (inout SSHWireWriter) -> Void = { _ in }) {
            client.send(SSHAgentMessage.frame(type, body))
        }

        /// The next message (type and contents), or nil when the agent closed.
        func reply() -> (type: UInt8, body: Data)? {
            func read(_ count: Int) -> Data? {
                var bytes = [UInt8](repeating: 0, count: count)
                var got = 0
                while got < count {
                    let n = bytes.withUnsafeMutableBytes { recv(client.descriptor, $0.baseAddress! + got, count - got, 0) }
                    guard n > 0 else { return nil }
                    got += n
                }
                return Data(bytes)
            }
            guard let header = read(4) else { return nil }
            let length = header.reduce(0) { $0 << 8 | Int($1) }
            guard length > 0, let body = read(length) else { return nil }
            return (body[body.startIndex], Data(body.dropFirst()))
        }
    }

    @Test("a header announcing 2 GiB is refused from the header alone; a truncated sign request gets SSH_AGENT_FAILURE and the connection is closed")
    func malformedMessages() async throws {
        let served = try await Self.serve()
        defer { served.agent.stop() }
        let socket = served.socket
        // The client blocks in recv: on a thread of its own, not the cooperative pool.
        try await Blocking.runThrowing {
            let huge = try RawSSHClient(socket)
            huge.client.send(Data([0x7F, 0xFF, 0xFF, 0xFF, SSHAgentMessage.signRequest]))
            #expect(huge.reply() == nil, "closed without an answer")

            let truncated = try RawSSHClient(socket)
            truncated.send(SSHAgentMessage.signRequest) { $0.uint32(1000) }
            #expect(truncated.reply()?.type == SSHAgentMessage.failure)
            #expect(truncated.client.isClosed())
        }
    }

    @Test("adding, removing and smartcard requests are SSH_AGENT_FAILURE and change nothing; the vault's key and its certificate are listed")
    func foreignKeys() async throws {
        let served = try await Self.serve()
        defer { served.agent.stop() }
        let (socket, certificate, key) = (served.socket, served.certificate, served.key)
        // The client blocks in recv: on a thread of its own, not the cooperative pool.
        try await Blocking.runThrowing {
            let client = try RawSSHClient(socket)
            for type: UInt8 in [17, 18, 19, 20, 21, 25, 26, 27, 200] {
                client.send(type) { $0.string("ssh-ed25519") }
                #expect(client.reply()?.type == SSHAgentMessage.failure, "type \(type)")
            }
            client.send(SSHAgentMessage.requestIdentities)
            let listed = try #require(client.reply())
            #expect(listed.type == SSHAgentMessage.identitiesAnswer)
            var reader = SSHWireReader(listed.body)
            #expect(try reader.uint32() == 2)
            #expect(try reader.string(maximumLength: 4096) == certificate.wireBlob)
            _ = try reader.text(maximumLength: 256)
            #expect(try reader.string(maximumLength: 4096) == key.wireBlob)
        }
    }

    @Test("a locked agent lists nothing and signs nothing; unlocked, it signs, and the signature verifies")
    func lockedAgent() async throws {
        let served = try await Self.serve()
        defer { served.agent.stop() }
        let (socket, certificate, key) = (served.socket, served.certificate, served.key)
        // The client blocks in recv: on a thread of its own, not the cooperative pool.
        try await Blocking.runThrowing {
            let client = try RawSSHClient(socket)
            client.send(SSHAgentMessage.lock) { $0.string("ignored") }
            #expect(client.reply()?.type == SSHAgentMessage.success)
            client.send(SSHAgentMessage.requestIdentities)
            #expect(client.reply()?.body == Data([0, 0, 0, 0]), "no identities while locked")
            let message = Data("session data".utf8)
            client.send(SSHAgentMessage.signRequest) { writer in
                writer.string(certificate.wireBlob)
                writer.string(message)
                writer.uint32(0)
            }
            #expect(client.reply()?.type == SSHAgentMessage.failure)
            client.send(SSHAgentMessage.unlock) { $0.string("") }
            #expect(client.reply()?.type == SSHAgentMessage.success)
            client.send(SSHAgentMessage.signRequest) { writer in
                writer.string(certificate.wireBlob)
                writer.string(message)
                writer.uint32(0)
            }
            let signed = try #require(client.reply())
            #expect(signed.type == SSHAgentMessage.signResponse)
            var reader = SSHWireReader(signed.body)
            let signature = try SSHSignature(wireBlob: try reader.string(maximumLength: 512))
            #expect(signature.isValid(for: message, by: key))
            // An unknown flag is refused.
            client.send(SSHAgentMessage.signRequest) { writer in
                writer.string(key.wireBlob)
                writer.string(message)
                writer.uint32(0x80)
            }
            #expect(client.reply()?.type == SSHAgentMessage.failure)
        }
    }

    @Test("a process of another user is closed on without an answer (SO_PEERCRED), even with the socket opened to everyone")
    func anotherUser() async throws {
        if getuid() != 0 { try TestEnvironment.unavailable("running a client as another user needs root (CI runs the tests as root)") }
        // A directory anyone may enter, straight in /tmp (the tests' own temporary
        // directory may sit in one only its owner can), and the socket opened to everyone:
        // past the file permissions, only the agent's own check stands.
        let made = "/tmp/latchkey-peer-\(UUID().uuidString.prefix(8))"
        try #require(mkdir(made, 0o755) == 0, "cannot make \(made)")
        defer { try? FileManager.default.removeItem(atPath: made) }
        chmod(made, 0o755)
        let served = try await Self.serve(socketDirectory: URL(fileURLWithPath: made))
        defer { served.agent.stop() }
        chmod(served.socket, 0o777)
        let listed = try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/setpriv"), ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/ssh-add", "-L"],
            environment: ["SSH_AUTH_SOCK": served.socket]
        )
        #expect(listed.status != 0 && !listed.stdout.contains("ssh-ed25519"), "\(listed.stdout) \(listed.stderr)")
        #expect(!listed.stderr.contains("Permission denied"), "it reached the socket: \(listed.stderr)")
    }
}
