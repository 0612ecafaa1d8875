#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// The ssh-agent protocol's messages the agent reads and writes (RFC 9987 §4 and §5;
/// draft-miller-ssh-agent): listing keys, signing with one, locking; adding or removing
/// keys is refused, since the agent serves only the vault's own keys.
enum SSHAgentMessage {
    static let failure: UInt8 = 5
    static let success: UInt8 = 6
    static let requestIdentities: UInt8 = 11
    static let identitiesAnswer: UInt8 = 12
    static let signRequest: UInt8 = 13
    static let signResponse: UInt8 = 14
    static let lock: UInt8 = 22
    static let unlock: UInt8 = 23

    /// A request, parsed strictly.
    enum Request: Equatable {
        case requestIdentities
        case sign(key: Data, data: Data, flags: UInt32)
        case lock(passphrase: Data)
        case unlock(passphrase: Data)
        /// Anything else (adding or removing keys, smartcards, extensions, unknown
        /// types): answered with `SSH_AGENT_FAILURE`.
        case unsupported(UInt8)
    }

    /// The flags a sign request may carry: `SSH_AGENT_RSA_SHA2_256` and `_512`, which
    /// OpenSSH may send whatever the key and which mean nothing for ECDSA and Ed25519.
    static let knownSignFlags: UInt32 = 0x02 | 0x04

    static func parse(_ body: Data) throws -> Request {
        var reader = SSHWireReader(body, subject: "ssh-agent message")
        let type = try reader.byte()
        switch type {
        case requestIdentities:
            try reader.expectEnd()
            return .requestIdentities
        case signRequest:
            let key = try reader.string(maximumLength: SSHCertificate.maximumBlobLength, "key")
            let data = try reader.string(maximumLength: SSHAgentFrameReader.maximumLength, "data")
            let flags = try reader.uint32()
            try reader.expectEnd()
            return .sign(key: key, data: data, flags: flags)
        case lock:
            let passphrase = try reader.string(maximumLength: 1024, "passphrase")
            try reader.expectEnd()
            return .lock(passphrase: passphrase)
        case unlock:
            let passphrase = try reader.string(maximumLength: 1024, "passphrase")
            try reader.expectEnd()
            return .unlock(passphrase: passphrase)
        default:
            return .unsupported(type)
        }
    }

    /// `body` framed: its length, then it.
    static func frame(_ type: UInt8, _ body: (inout SSHWireWriter) -> Void = { _ in }) -> Data {
        var inner = SSHWireWriter()
        inner.byte(type)
        body(&inner)
        var writer = SSHWireWriter()
        writer.string(inner.bytes)
        return writer.bytes
    }

    /// `SSH_AGENT_IDENTITIES_ANSWER` listing `identities` (key or certificate blob, comment).
    static func identities(_ identities: [(blob: Data, comment: String)]) -> Data {
        frame(identitiesAnswer) { writer in
            writer.uint32(UInt32(identities.count))
            for identity in identities {
                writer.string(identity.blob)
                writer.string(identity.comment)
            }
        }
    }
}
