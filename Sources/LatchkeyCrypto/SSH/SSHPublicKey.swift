#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An SSH public key of one of the two types Latchkey makes and certifies:
/// `ecdsa-sha2-nistp256` (RFC 5656 §3.1) and `ssh-ed25519` (RFC 8709 §4), as the wire
/// blob OpenSSH puts in `.pub` files, `authorized_keys`, certificates and agent messages.
///
/// Parsing is strict and bounded: any other type (RSA, DSA, other curves, FIDO `sk-`
/// keys, certificates) is ``CryptoError/Code/unsupportedAlgorithm``, a blob that is not
/// exactly one such key is ``CryptoError/Code/invalidEncoding``, and a point not on the
/// curve is ``CryptoError/Code/invalidKey``.
public struct SSHPublicKey: Hashable, Sendable {
    /// The key's SSH algorithm name.
    public enum Algorithm: String, Hashable, Sendable, CaseIterable {
        case ecdsaP256 = "ecdsa-sha2-nistp256"
        case ed25519 = "ssh-ed25519"

        /// The matching certificate type (`PROTOCOL.certkeys`).
        public var certificateType: String { rawValue + "-cert-v01@openssh.com" }
    }

    /// The longest key blob read: a P-256 blob is 104 bytes, an Ed25519 one 51; an RSA
    /// blob of up to 16,384 bits still reads as far as its type, to be refused by name.
    public static let maximumBlobLength = 4096
    /// The longest public key line read (`.pub`, one line of `authorized_keys`).
    public static let maximumLineLength = 8192

    public let algorithm: Algorithm
    /// The same key for verifying signatures with the crypto core.
    public let verifyingKey: VerifyingKey
    /// The wire blob (RFC 4253 §6.6).
    public let wireBlob: Data

    /// The SSH form of a P-256 or Ed25519 key.
    public init(_ key: VerifyingKey) throws {
        var writer = SSHWireWriter()
        switch key.keyType {
        case .p256:
            algorithm = .ecdsaP256
            writer.string(Algorithm.ecdsaP256.rawValue)
            writer.string("nistp256")
            // The SPKI's BIT STRING ends with the uncompressed point 04 ‖ X ‖ Y.
            writer.string(key.spkiDER.suffix(65))
        case .ed25519:
            algorithm = .ed25519
            writer.string(Algorithm.ed25519.rawValue)
            writer.string(key.spkiDER.suffix(32))
        case .rsa:
            throw CryptoError.unsupportedAlgorithm(reason: "SSH keys are ecdsa-sha2-nistp256 or ssh-ed25519, not RSA")
        }
        verifyingKey = key
        wireBlob = writer.bytes
    }

    /// Parses a wire blob.
    public init(wireBlob blob: Data) throws {
        guard blob.count <= Self.maximumBlobLength else {
            throw CryptoError.invalidEncoding(reason: "an SSH public key blob of \(blob.count) bytes, more than \(Self.maximumBlobLength)")
        }
        var reader = SSHWireReader(blob, subject: "SSH public key")
        let name = try reader.text(maximumLength: 64, "key type")
        switch Algorithm(rawValue: name) {
        case .ecdsaP256:
            let curve = try reader.text(maximumLength: 16, "curve")
            guard curve == "nistp256" else { throw reader.malformed("curve \(curve.debugDescription) for ecdsa-sha2-nistp256") }
            let point = try reader.string(maximumLength: 65, "point")
            guard point.count == 65, point.first == 0x04 else { throw reader.malformed("a P-256 point that is not 65 bytes, uncompressed") }
            try reader.expectEnd()
            verifyingKey = try VerifyingKey(p256X: point.dropFirst().prefix(32), y: point.suffix(32))
            algorithm = .ecdsaP256
        case .ed25519:
            let raw = try reader.string(maximumLength: 32, "key")
            guard raw.count == 32 else { throw reader.malformed("an Ed25519 key that is not 32 bytes") }
            try reader.expectEnd()
            verifyingKey = try VerifyingKey(ed25519RawRepresentation: raw)
            algorithm = .ed25519
        case nil:
            throw CryptoError.unsupportedAlgorithm(
                reason: "SSH key type \(name.quotedForError) is not supported: use ecdsa-sha2-nistp256 or ssh-ed25519"
            )
        }
        wireBlob = blob
    }

    /// Parses a public key line: `<type> <base64 blob> [comment]`, as `ssh-keygen` writes
    /// `.pub` files. The type named must be the blob's; options before the type (an
    /// `authorized_keys` line's `from="…"`) are refused, not skipped.
    public init(openSSHLine line: String) throws {
        guard line.utf8.count <= Self.maximumLineLength else {
            throw CryptoError.invalidEncoding(reason: "an SSH public key line of \(line.utf8.count) bytes, more than \(Self.maximumLineLength)")
        }
        let fields = line.trimmingWhitespace().split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard fields.count >= 2 else { throw CryptoError.invalidEncoding(reason: "an SSH public key line is `<type> <base64> [comment]`") }
        guard let blob = Data(base64Encoded: String(fields[1])) else {
            throw CryptoError.invalidEncoding(reason: "the key of an SSH public key line is not base64")
        }
        try self.init(wireBlob: blob)
        guard fields[0] == algorithm.rawValue else {
            throw CryptoError.invalidEncoding(reason: "an SSH public key line names \(String(fields[0]).quotedForError) but holds \(algorithm.rawValue)")
        }
    }

    /// The key as one line: `<type> <base64 blob>`, with `comment` after when given.
    public func openSSHLine(comment: String? = nil) -> String {
        let line = algorithm.rawValue + " " + wireBlob.base64EncodedString()
        return comment.map { line + " " + $0 } ?? line
    }

    /// `SHA256:<base64 without padding>` of the blob, as `ssh-keygen -l` prints it.
    public var fingerprint: String {
        let digest = (try? DigestAlgorithm.sha256.hash(wireBlob)) ?? Data()
        // Standard base64 without padding, as ssh-keygen -l prints it.
        return "SHA256:" + Base64Codec.encode(digest, table: Base64Codec.standardSymbols, padding: false)
    }

    public static func == (lhs: SSHPublicKey, rhs: SSHPublicKey) -> Bool {
        lhs.wireBlob == rhs.wireBlob
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(wireBlob)
    }
}
