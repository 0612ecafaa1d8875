import Foundation
import Glibc
@testable import Latchkey
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyTestSupport
import Logging
import Synchronization
import Testing

/// The agent in this process over a real Unix socket: the vault's operations through
/// `AgentKeyStore`, compare-and-swap updates from many threads, and hostile clients
/// (docs/PROTOCOL.md section 11).
@Suite("Key agent over a real socket")
struct KeyAgentTests {
    /// An agent over a fresh key-file vault, listening in `scratch`.
    struct Served {
        let agent: KeyAgent
        let scratch: TemporaryDirectory
        let socket: String
        let vault: URL

        func stop() { agent.stop() }
    }

    static func serve(confirmation: (@Sendable (AgentSignatureRequest) -> Bool)? = nil) async throws -> Served {
        let scratch = try TemporaryDirectory()
        let key = try scratch.keyFile()
        let vault = scratch.url.appendingPathComponent("vault")
        var configuration = KeyAgent.Configuration(vaultDirectory: vault, reopenSource: .keyFile(key), logger: Logger(label: "agent-test"))
        configuration.idleTimeout = nil
        configuration.confirmation = confirmation
        let agent = try KeyAgent(configuration: configuration, openingWith: .keyFile(key))
        let socket = try agent.listen(at: scratch.url.appendingPathComponent("agent.sock").path, environment: [:])
        Blocking.detached { await agent.serve() }
        return Served(agent: agent, scratch: scratch, socket: socket, vault: vault)
    }

    /// A client that writes raw bytes and reads frames, as a hostile peer would.
    final class RawClient: @unchecked Sendable {
        let descriptor: Int32
        var reader = AgentFrameReader()

        init(_ path: String) throws {
            descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard connected == 0 else { throw TestSupportError("cannot connect to \(path)") }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(descriptor) }

        func send(_ bytes: Data) {
            _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        func send(_ request: AgentRequest) throws { send(try AgentFrame.encode(request)) }

        /// Ends this side of the stream: the agent sees the end after what was sent.
        func finish() { shutdown(descriptor, Int32(SHUT_WR)) }

        /// The next reply, or nil when the agent closed the connection.
        func reply() throws -> AgentReply? {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                if let body = try reader.next() { return try JSONDecoder().decode(AgentReply.self, from: body) }
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count > 0 else { return nil }
                try reader.append(buffer[0..<count])
            }
        }

        /// Whether the agent closed the connection (end of stream, with nothing more).
        func isClosed() -> Bool {
            var byte: UInt8 = 0
            return recv(descriptor, &byte, 1, 0) == 0
        }
    }

    static func header(version: UInt8 = AgentFrame.version, length: Int) -> Data {
        Data([version, UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
    }

    @Test("every vault operation through the agent: create, list, sign (the signature verifies), update metadata, delete; a key file vault reopens on unlock")
    func operations() async throws {
        let served = try await Self.serve()
        defer { served.stop() }
        try await Blocking.runThrowing {
            let store = try AgentKeyStore(socketPath: served.socket, directory: served.vault)
            let created = try store.createKey(.es256, metadata: Data("{\"kind\":\"test\"}".utf8), protection: .software)
            let ed = try store.createKey(.ed25519, metadata: Data(), protection: .software)
            #expect(try store.entries().map(\.handle) == [created.handle, ed.handle])
            let message = Data("sign me".utf8)
            let signature = try store.sign(message, with: created.handle)
            #expect(created.publicKey.isValidSignature(signature, for: message))
            let updated = try store.updateMetadata(created.handle) { $0 = Data("{\"kind\":\"changed\"}".utf8) }
            #expect(updated.metadata == Data("{\"kind\":\"changed\"}".utf8))
            #expect(try store.entry(created.handle).metadata == updated.metadata)
            try store.deleteKey(ed.handle)
            #expect(throws: KeyVaultError.self) { try store.entry(ed.handle) }
            // Key material never comes out.
            #expect { try store.tpmKey(created.handle) } throws: { ($0 as? KeyVaultError)?.code == .agentUnavailable }

            let connection = try KeyAgentConnection.connect(to: served.socket)
            #expect(try connection.lock().locked)
            #expect { try store.sign(message, with: created.handle) } throws: {
                ($0 as? KeyVaultError)?.code == .agentUnavailable && "\($0)".contains("locked")
            }
            #expect(throws: KeyVaultError.self) { try AgentKeyStore(socketPath: served.socket, directory: served.vault) }
            #expect(try connection.unlock(passphrase: nil).locked == false)
            #expect(try created.publicKey.isValidSignature(store.sign(message, with: created.handle), for: message))
        }
    }

    @Test("eighty metadata updates from eight threads through the agent: none is lost (compare-and-swap)")
    func concurrentUpdates() async throws {
        let served = try await Self.serve()
        defer { served.stop() }
        let handle = try await Blocking.runThrowing {
            try AgentKeyStore(socketPath: served.socket, directory: served.vault).createKey(.es256, metadata: Data("0".utf8), protection: .software).handle
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await Blocking.runThrowing {
                        let store = try AgentKeyStore(socketPath: served.socket, directory: served.vault)
                        for _ in 0..<10 {
                            _ = try store.updateMetadata(handle) { data in
                                data = Data(String((Int(String(decoding: data, as: UTF8.self)) ?? -1000) + 1).utf8)
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let final = try await Blocking.runThrowing { try AgentKeyStore(socketPath: served.socket, directory: served.vault).entry(handle).metadata }
        #expect(String(decoding: final, as: UTF8.self) == "80")
    }

    @Test("replace-metadata-and-sign: 80 counter bumps from eight threads, each signed in the same request; every signature verifies over its own counter value, none shared, none lost; a stale expected value signs nothing")
    func counterAndSignature() async throws {
        let served = try await Self.serve()
        defer { served.stop() }
        let created = try await Blocking.runThrowing {
            try AgentKeyStore(socketPath: served.socket, directory: served.vault).createKey(.es256, metadata: Data("0".utf8), protection: .software)
        }
        let signed = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await Blocking.runThrowing {
                        let store = try AgentKeyStore(socketPath: served.socket, directory: served.vault)
                        var counters: [Int] = []
                        for _ in 0..<10 {
                            var counter = 0
                            let (entry, signature) = try store.updateMetadataAndSign(created.handle) { data in
                                counter = (Int(String(decoding: data, as: UTF8.self)) ?? -1000) + 1
                                data = Data(String(counter).utf8)
                                return Data("counter \(counter)".utf8)
                            }
                            #expect(entry.metadata == Data(String(counter).utf8))
                            #expect(created.publicKey.isValidSignature(signature, for: Data("counter \(counter)".utf8)))
                            counters.append(counter)
                        }
                        return counters
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(signed.sorted() == Array(1...80))

        // A swap that does not take place signs nothing and changes nothing (the client
        // blocks in recv: on a thread of its own, not the cooperative pool).
        let socket = served.socket
        try await Blocking.runThrowing {
            let client = try RawClient(socket)
            try client.send(AgentRequest(
                op: .replaceMetadataAndSign, handle: created.handle.rawValue, message: Base64URL.encode(Data("m".utf8)),
                metadata: Base64URL.encode(Data("999".utf8)), expected: Base64URL.encode(Data("0".utf8))
            ))
            let stale = try #require(try client.reply())
            #expect(stale.error?.code == "metadataChanged")
            #expect(stale.signature == nil)
            // Without a message it is refused, the swap not made.
            try client.send(AgentRequest(
                op: .replaceMetadataAndSign, handle: created.handle.rawValue, metadata: Base64URL.encode(Data("999".utf8)), expected: Base64URL.encode(Data("80".utf8))
            ))
            #expect(try #require(try client.reply()).error?.code == AgentFailure.badRequest)
        }
        let final = try await Blocking.runThrowing { try AgentKeyStore(socketPath: served.socket, directory: served.vault).entry(created.handle).metadata }
        #expect(final == Data("80".utf8))
    }

    @Test("--confirm: a refused signature is denied, for sign and for replace-metadata-and-sign, and leaves the counter as it was; the prompt sees the key's kind and the asking pid")
    func confirmation() async throws {
        let asked = Mutex<[AgentSignatureRequest]>([])
        let allow = Mutex(false)
        let served = try await Self.serve { request in
            asked.withLock { $0.append(request) }
            return allow.withLock { $0 }
        }
        defer { served.stop() }
        try await Blocking.runThrowing {
            let store = try AgentKeyStore(socketPath: served.socket, directory: served.vault)
            let created = try store.createKey(.es256, metadata: Data("{\"kind\":\"webauthn\"}".utf8), protection: .software)
            let message = Data("sign me".utf8)
            #expect { try store.sign(message, with: created.handle) } throws: { "\($0)".contains("not confirmed") }
            #expect { _ = try store.updateMetadataAndSign(created.handle) { $0 = Data("{\"kind\":\"webauthn\",\"n\":1}".utf8); return message } } throws: {
                "\($0)".contains("not confirmed")
            }
            #expect(try store.entry(created.handle).metadata == Data("{\"kind\":\"webauthn\"}".utf8))
            allow.withLock { $0 = true }
            let (entry, signature) = try store.updateMetadataAndSign(created.handle) { $0 = Data("{\"kind\":\"webauthn\",\"n\":1}".utf8); return message }
            #expect(entry.metadata == Data("{\"kind\":\"webauthn\",\"n\":1}".utf8))
            #expect(created.publicKey.isValidSignature(signature, for: message))
        }
        let requests = asked.withLock { $0 }
        #expect(requests.count == 3)
        #expect(requests.allSatisfy { $0.kind == "webauthn" && $0.pid == getpid() && $0.handle.count == 32 })
    }

    @Test("hostile requests: another version, an oversized or empty frame, a truncated one, malformed JSON, an unknown operation, a handle of another vault, bad base64; each answered with an error, the agent unharmed")
    func hostileRequests() async throws {
        let served = try await Self.serve()
        defer { served.stop() }
        // A key of another vault: its handle is well formed, and unknown here.
        let otherScratch = try TemporaryDirectory()
        let other = try KeyVault.open(at: otherScratch.vault, key: .keyFile(try otherScratch.keyFile()))
        let foreign = try other.createKey(.es256, metadata: Data(), protection: .software).handle.rawValue

        try await Blocking.runThrowing {
            func closesAfterError(_ bytes: Data, _ expected: String) throws {
                let client = try RawClient(served.socket)
                client.send(bytes)
                let reply = try client.reply()
                #expect(reply?.error?.code == AgentFailure.badRequest, "\(expected): \(String(describing: reply))")
                #expect(reply?.error?.reason.contains(expected) == true, "\(String(describing: reply?.error?.reason))")
                #expect(client.isClosed(), "\(expected): closed")
            }
            let hello = try AgentFrame.encode(AgentRequest(op: .hello))
            try closesAfterError(Data([2]) + hello.dropFirst(), "version 2")
            try closesAfterError(Self.header(length: AgentFrame.maximumBodySize + 1), "262145")
            try closesAfterError(Self.header(length: 0xFFFF_FFFF), "announcing")
            try closesAfterError(Self.header(length: 0), "announcing 0")
            func framed(_ text: String) -> Data { Self.header(length: text.utf8.count) + Data(text.utf8) }
            try closesAfterError(framed("{\"op\":1}x"), "\"op\"")
            try closesAfterError(framed("[1,2]"), "\"op\"")
            try closesAfterError(framed("{\"op\":\"sign\",\"handle\":42}"), "malformed")

            // A frame cut short: the agent waits, then sees the end, and lives on.
            do {
                let client = try RawClient(served.socket)
                client.send(Self.header(length: 100) + Data("{\"op\":".utf8))
            }

            let client = try RawClient(served.socket)
            func ask(_ request: AgentRequest) throws -> AgentFailure? {
                try client.send(request)
                return try #require(try client.reply()).error
            }
            #expect(try ask(AgentRequest(op: "export-private-key"))?.code == AgentFailure.unknownOperation)
            #expect(try ask(AgentRequest(op: .sign, handle: foreign, message: "AAAA"))?.code == "keyNotFound")
            #expect(try ask(AgentRequest(op: .sign, handle: "../../etc/passwd", message: "AAAA"))?.code == AgentFailure.badRequest)
            #expect(try ask(AgentRequest(op: .sign, handle: foreign, message: "not base64!"))?.code == AgentFailure.badRequest)
            #expect(try ask(AgentRequest(op: .sign, handle: foreign, message: String(repeating: "A", count: 100_000)))?.code == AgentFailure.badRequest)
            #expect(try ask(AgentRequest(op: .createKey, algorithm: "RS256", protection: "software", metadata: ""))?.code == AgentFailure.badRequest)
            #expect(try ask(AgentRequest(op: .unlock, passphrase: ""))?.code == AgentFailure.badRequest)
            #expect(try ask(AgentRequest(op: .hello)) == nil, "the same connection still answers")
        }

        // Then random frames, seeded: each gets an answer or a close, never a crash.
        try await Blocking.runThrowing {
            var generator = AgentFrameTests.SeededGenerator(state: 36)
            for seed in 0..<300 {
                let client = try RawClient(served.socket)
                var body = try AgentFrame.encode(AgentRequest(op: [.hello, .scan, .entry, .sign, .replaceMetadata, .replaceMetadataAndSign, .deleteKey][seed % 7], handle: foreign, message: "AAAA"))
                for _ in 0..<Int.random(in: 1...6, using: &generator) {
                    let index = Int.random(in: 0..<body.count, using: &generator)
                    body[index] = UInt8.random(in: 0...255, using: &generator)
                }
                client.send(body)
                client.finish()
                _ = try? client.reply()
            }
            let store = try AgentKeyStore(socketPath: served.socket, directory: served.vault)
            #expect(try store.entries().isEmpty, "the agent still answers, and nothing was made")
        }
    }
}
