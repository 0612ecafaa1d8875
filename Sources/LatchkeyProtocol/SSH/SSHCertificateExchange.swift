#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// Getting an OpenSSH certificate from the provider's SSH CA (docs/PROTOCOL.md section
/// 12): `POST v1/ssh/certificates` with an access token of scope `ssh`, the SSH public key,
/// and a proof that the caller holds its private key, a signature by that key over the
/// request itself (``signedMessage(issuer:accessToken:publicKey:principals:lifetime:time:nonce:)``).
/// The proof names the access token, so it cannot be lifted onto another token, carries a
/// time and a random nonce, so it cannot be sent twice, and the requested principals and
/// lifetime, so they cannot be changed on the way.
public enum SSHCertificateExchange {
    /// The scope an access token needs.
    public static let scope = "ssh"
    /// How far a proof's time may be from the provider's clock, either way.
    public static let proofWindow: TimeInterval = 300
    /// A proof's label, first in what it signs.
    public static let proofLabel = "latchkey-ssh-certificate-request-v1"

    /// `POST v1/ssh/certificates`.
    public struct Request: Codable, Hashable, Sendable {
        /// The key to certify, as a `.pub` line (`ecdsa-sha2-nistp256 AAAA… comment`).
        public var publicKey: String
        /// The principals asked for, each granted; absent: every granted one.
        public var principals: [String]?
        /// Seconds the certificate should last; absent: the provider's lifetime. Never
        /// more than the provider's cap.
        public var lifetime: Int?
        public var proof: Proof
        /// That the key lives in a TPM: TPM2_Certify of it over the proof's signed message
        /// (`serve --ssh-require-attestation tpm` demands it; any provider checks one sent).
        public var attestation: KeyAttestation?

        public init(publicKey: String, principals: [String]? = nil, lifetime: Int? = nil, proof: Proof, attestation: KeyAttestation? = nil) {
            self.publicKey = publicKey
            self.principals = principals
            self.lifetime = lifetime
            self.proof = proof
            self.attestation = attestation
        }
    }

    /// A TPM's statement that the SSH key is one of its own keys (docs/PROTOCOL.md section
    /// 12, "Attested keys"): the fields of a WebAuthn `tpm` attestation statement (L3
    /// §8.3), each base64url, whose `certInfo` carries SHA-256 of the proof's
    /// ``signedMessage(issuer:accessToken:publicKey:principals:lifetime:time:nonce:)`` as
    /// its extraData, so it is made for this one request.
    public struct KeyAttestation: Codable, Hashable, Sendable {
        /// `tpm`, the one format.
        public var format: String
        /// The AIK certificate, DER, then any intermediates (not the root).
        public var x5c: [String]
        /// TPMS_ATTEST, without its size.
        public var certInfo: String
        /// The AIK's ECDSA signature over `certInfo`, DER.
        public var sig: String
        /// The SSH key's TPMT_PUBLIC, without its size.
        public var pubArea: String

        /// The one format.
        public static let tpm = "tpm"

        public init(format: String = Self.tpm, x5c: [String], certInfo: String, sig: String, pubArea: String) {
            self.format = format
            self.x5c = x5c
            self.certInfo = certInfo
            self.sig = sig
            self.pubArea = pubArea
        }
    }

    /// The signature by the SSH key over ``signedMessage(issuer:accessToken:publicKey:principals:lifetime:time:nonce:)``.
    public struct Proof: Codable, Hashable, Sendable {
        /// Seconds since 1970 when the proof was made.
        public var time: Int64
        /// 16 to 64 random bytes, base64url.
        public var nonce: String
        /// The SSH signature blob (RFC 4253 §6.6), base64url.
        public var signature: String

        public init(time: Int64, nonce: String, signature: String) {
            self.time = time
            self.nonce = nonce
            self.signature = signature
        }
    }

    /// The answer, `201`.
    public struct Issued: Codable, Hashable, Sendable {
        /// The certificate, as a `-cert.pub` line.
        public var certificate: String
        /// The serial, in decimal (a 64-bit number JSON cannot always hold as one).
        public var serial: String
        public var keyID: String
        public var principals: [String]
        /// The validity window, RFC 3339.
        public var validAfter: String
        public var validBefore: String

        public init(certificate: String, serial: String, keyID: String, principals: [String], validAfter: String, validBefore: String) {
            self.certificate = certificate
            self.serial = serial
            self.keyID = keyID
            self.principals = principals
            self.validAfter = validAfter
            self.validBefore = validBefore
        }

        /// What `JSONEncoder` with sorted keys writes, written directly (``JSONObjectWriter``).
        public var encodedJSON: Data {
            var writer = JSONObjectWriter(capacity: 256 + certificate.utf8.count)
            writer.string("certificate", certificate)
            writer.string("keyID", keyID)
            writer.strings("principals", principals)
            writer.string("serial", serial)
            writer.string("validAfter", validAfter)
            writer.string("validBefore", validBefore)
            return writer.finished()
        }
    }

    /// What a proof signs, in the SSH wire encoding: the label, the issuer, SHA-256 of the
    /// access token, the key's blob, the principals asked for (none: every granted one),
    /// the lifetime asked for (0: the provider's), the time and the nonce.
    public static func signedMessage(
        issuer: String, accessToken: String, publicKey: SSHPublicKey, principals: [String]?, lifetime: Int?, time: Int64, nonce: Data
    ) throws -> Data {
        var writer = SSHWireWriter()
        writer.string(proofLabel)
        writer.string(issuer)
        writer.string(try DigestAlgorithm.sha256.hash(Data(accessToken.utf8)))
        writer.string(publicKey.wireBlob)
        writer.nested { list in (principals ?? []).forEach { list.string($0) } }
        writer.uint64(UInt64(max(lifetime ?? 0, 0)))
        writer.uint64(UInt64(max(time, 0)))
        writer.string(nonce)
        return writer.bytes
    }
}
