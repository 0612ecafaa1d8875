import Foundation
import Hummingbird
@testable import LatchkeyHost
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Logging
import Synchronization
import Testing

/// The CA keys and the KRL the daemon keeps for `sshd` (``HostSSHFiles``) against a
/// provider that answers what it likes at `/v1/ssh/ca` and `/v1/ssh/krl`: what is not an
/// OpenSSH key file or a KRL never replaces the file `sshd` trusts, and an honest answer
/// does.
@Suite("latchkey host: the SSH CA keys and KRL kept for sshd")
struct HostSSHFilesTests {
    /// What the provider answers at each path: a status and a body.
    final class Answers: Sendable {
        let ca = Mutex<(Int, Data)>((200, Data()))
        let krl = Mutex<(Int, Data)>((200, Data()))
    }

    /// An OpenSSH line for RFC 8032's first Ed25519 test key (section 7.1, TEST 1).
    static let keyLine: String = {
        let key = [UInt8]((try? Data(hex: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")) ?? Data())
        func string(_ bytes: [UInt8]) -> [UInt8] { withUnsafeBytes(of: UInt32(bytes.count).bigEndian, Array.init) + bytes }
        return "ssh-ed25519 " + Data(string(Array("ssh-ed25519".utf8)) + string(key)).base64EncodedString() + " latchkey-ca"
    }()
    static let krl = Data("SSHKRL\n\0".utf8) + Data([0, 0, 0, 1, 0, 0, 0, 0])

    static func withProvider(_ answers: Answers, _ body: @escaping @Sendable (URL) async throws -> Void) async throws {
        let router = Router()
        router.get(RouterPath(stringLiteral: ProtocolPath.sshAuthority)) { _, _ in
            let (status, data) = answers.ca.withLock { $0 }
            return Response(status: .init(code: status), body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        router.get(RouterPath(stringLiteral: ProtocolPath.sshRevocations)) { _, _ in
            let (status, data) = answers.krl.withLock { $0 }
            return Response(status: .init(code: status), body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        try await LiveServer.run(router, label: "ssh-files-provider", body)
    }

    @Test("lies at /v1/ssh/ca and /v1/ssh/krl leave sshd's files as they were: not a key, a key and a stray line, nothing, an HTML page, a KRL without its magic, an error status")
    func liesLeaveTheFiles() async throws {
        let scratch = try TemporaryDirectory()
        let caFile = scratch.url.appendingPathComponent("latchkey_ca.pub").path
        let krlFile = scratch.url.appendingPathComponent("latchkey.krl").path
        let keptCA = Data((Self.keyLine + "\n").utf8)
        try keptCA.write(to: URL(fileURLWithPath: caFile))
        try Self.krl.write(to: URL(fileURLWithPath: krlFile))
        let answers = Answers()
        let lies: [((Int, Data), (Int, Data))] = [
            ((200, Data("not a key\n".utf8)), (200, Data("not a krl".utf8))),
            ((200, Data((Self.keyLine + "\ncommand=\"/bin/sh\" " + Self.keyLine + "\n").utf8)), (200, Data("SSHKRL\n".utf8))),
            ((200, Data()), (200, Data())),
            ((200, Data("<html><body>Sign in</body></html>".utf8)), (200, Data("<html></html>".utf8))),
            ((500, Data((Self.keyLine + "\n").utf8)), (503, Self.krl + Data([1]))),
        ]
        try await Self.withProvider(answers) { issuer async throws in
            let files = HostSSHFiles(issuer: issuer, caFile: caFile, krlFile: krlFile, logger: Logger(label: "ssh-files-test"))
            for (ca, krl) in lies {
                answers.ca.withLock { $0 = ca }
                answers.krl.withLock { $0 = krl }
                await files.sync(transport: HTTP1Transport())
                #expect(try Data(contentsOf: URL(fileURLWithPath: caFile)) == keptCA, "after CA answer \(ca.0) \(String(decoding: ca.1, as: UTF8.self))")
                #expect(try Data(contentsOf: URL(fileURLWithPath: krlFile)) == Self.krl, "after KRL answer \(krl.0)")
            }
            // An honest change replaces both, whole.
            let rotated = Data((Self.keyLine + "\n" + Self.keyLine.replacingOccurrences(of: "latchkey-ca", with: "latchkey-ca-next") + "\n").utf8)
            let revoked = Self.krl + Data([0x21, 0, 0, 0, 0])
            answers.ca.withLock { $0 = (200, rotated) }
            answers.krl.withLock { $0 = (200, revoked) }
            await files.sync(transport: HTTP1Transport())
            #expect(try Data(contentsOf: URL(fileURLWithPath: caFile)) == rotated)
            #expect(try Data(contentsOf: URL(fileURLWithPath: krlFile)) == revoked)
            // A provider without an SSH CA (404) leaves both alone.
            answers.ca.withLock { $0 = (404, Data()) }
            answers.krl.withLock { $0 = (404, Data()) }
            await files.sync(transport: HTTP1Transport())
            #expect(try Data(contentsOf: URL(fileURLWithPath: caFile)) == rotated)
            #expect(try Data(contentsOf: URL(fileURLWithPath: krlFile)) == revoked)
        }
    }
}
