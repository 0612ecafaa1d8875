import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

/// The hash chain over the audit log and its signed checkpoints (docs/ARCHITECTURE.md, "The
/// audit log"; docs/SECURITY.md, "Audit log"). Event `n`'s link is
/// `SHA-256("latchkey-audit-chain-1" ‖ link(n−1) ‖ n as 8 bytes big-endian ‖ canonical bytes
/// of event n)`, starting from 32 zero bytes, or from the checkpoint retention pruned to.
/// A checkpoint is a compact JWS (ES256) by the provider's audit key over
/// `{"iss", "id", "hash", "iat"}`: the newest ("the head") is rewritten by every sealing,
/// so events cannot be cut from the end; one is kept for good every
/// ``checkpointEvery`` events or ``checkpointInterval``, for retention to prune to and an
/// operator to ship elsewhere.
enum AuditChain {
    /// The schema version (``Migrations``) that made the audit tables as they are (10 made
    /// the log, 11 its table of waiting events).
    static let schemaVersion: Int64 = 11
    /// The link before the first event.
    static let genesis = Data(repeating: 0, count: 32)
    /// One sealer at a time across instances (``ProviderDatabase/exclusiveTransaction(lock:_:)``).
    static let lockKey = Int64(0x4C61_7463_6841_7564)
    /// The names of the sealed store secrets: the rows' authentication key and the
    /// checkpoints' signing key.
    static let macKeyName = "audit-mac"
    static let signingKeyName = "audit-signing-key"
    static let checkpointEvery: Int64 = 10_000
    static let checkpointInterval: TimeInterval = 3600
    /// The checkpoint JWS's `typ`.
    static let checkpointType = "latchkey-audit-checkpoint+jwt"

    static func link(previous: Data, id: Int64, entry: AuditEntry) throws -> Data {
        var input = Data("latchkey-audit-chain-1".utf8)
        input.append(previous)
        withUnsafeBytes(of: id.bigEndian) { input.append(contentsOf: $0) }
        input.append(entry.canonical)
        return try DigestAlgorithm.sha256.hash(input)
    }

    /// What a checkpoint signs.
    struct Claims: Codable, Equatable {
        var iss: String
        var id: Int64
        var hash: String
        var iat: Int64
    }

    static func sign(id: Int64, hash: Data, issuer: String, now: Date, key: SigningKey) throws -> String {
        let claims = Claims(iss: issuer, id: id, hash: Base64URL.encode(hash), iat: Int64(now.timeIntervalSince1970))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try JWS.sign(payload: try encoder.encode(claims), with: key, keyID: try key.publicKey.jwk.thumbprint(), type: checkpointType)
    }

    /// Whether `signature` is a checkpoint by `key` for event `id` with link `hash`.
    static func checkpointHolds(_ signature: String, id: Int64, hash: Data, key: VerifyingKey) -> Bool {
        guard let jws = try? JWS(compact: signature), (try? jws.verify(with: key)) != nil,
              let claims = try? JSONDecoder().decode(Claims.self, from: jws.payload)
        else { return false }
        return claims.id == id && claims.hash == Base64URL.encode(hash)
    }
}
