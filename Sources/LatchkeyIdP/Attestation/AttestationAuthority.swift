import Foundation
import LatchkeyCrypto

/// The provider's attestation CA (`serve --attestation-ca`; docs/PROTOCOL.md section 10):
/// an ES256 key and its self-signed root certificate, made on first use and kept sealed
/// in the store like the signing keys (``StoreSealing``), so every instance of one store
/// and every restart on the same data directory issues under the same root. It signs the
/// AIK certificates that ``AttestationActivations`` grants.
struct AttestationAuthority: Sendable {
    let key: SigningKey
    let root: X509Certificate

    /// The root outlives any AIK certificate it signs by far: relying parties pin it.
    static let rootLifetime: TimeInterval = 20 * 365 * 86400
    /// An AIK certificate's lifetime; the client asks again when its certificate ends.
    static let certificateLifetime: TimeInterval = 2 * 365 * 86400
    /// Clocks differ: certificates start a little before they are issued.
    static let backdating: TimeInterval = 300

    private static let keyName = "attestation-ca-key"
    private static let rootName = "attestation-ca-root"

    /// The CA of this store, made (key and root together, in one transaction) when there
    /// is none yet; an instance that loses the race reads the winner's.
    static func load(database: any ProviderDatabase, sealing: StoreSealing, displayName: String, now: Date = ProviderClock.now) async throws -> AttestationAuthority {
        let fresh = try SigningKey.generate(.es256)
        let root = try X509Certificate.selfSignedAuthority(
            commonName: "\(displayName) attestation CA", key: fresh, serial: try serial(),
            notBefore: now.addingTimeInterval(-backdating), notAfter: now.addingTimeInterval(rootLifetime)
        )
        let sealedKey = try fresh.withPKCS8DER { try sealing.seal(Data($0), name: keyName) }
        let sealedRoot = try sealing.seal(root.derEncoded, name: rootName)
        let (storedKey, storedRoot) = try await database.transaction { transaction -> (Data, Data) in
            let key = try await transaction.first("SELECT sealed_value FROM provider_secrets WHERE name = \(keyName)")
            let root = try await transaction.first("SELECT sealed_value FROM provider_secrets WHERE name = \(rootName)")
            if let key, let root {
                return (try key.decode("sealed_value", as: Data.self), try root.decode("sealed_value", as: Data.self))
            }
            guard key == nil, root == nil else {
                throw StoreError.keyUnavailable("the store holds half of the attestation CA (its key or its root, not both)")
            }
            try await transaction.execute("INSERT INTO provider_secrets (name, sealed_value) VALUES (\(keyName), \(sealedKey))")
            try await transaction.execute("INSERT INTO provider_secrets (name, sealed_value) VALUES (\(rootName), \(sealedRoot))")
            return (sealedKey, sealedRoot)
        }
        var der = try sealing.open(storedKey, name: keyName)
        defer { der.resetBytes(in: 0..<der.count) }
        let key = try SigningKey(pkcs8DER: der)
        let storedCertificate = try X509Certificate(derEncoded: try sealing.open(storedRoot, name: rootName))
        guard try storedCertificate.publicKey == key.publicKey else {
            throw StoreError.keyUnavailable("the store's attestation CA root is not for its key")
        }
        return AttestationAuthority(key: key, root: storedCertificate)
    }

    /// An AIK certificate for `attestationKey` of the TPM `tpm` (WebAuthn L3 §8.3.1).
    func certify(_ attestationKey: VerifyingKey, tpm: TPMDescription, now: Date = ProviderClock.now) throws -> X509Certificate {
        try X509Certificate.attestationKeyCertificate(
            for: attestationKey, tpm: tpm, issuer: root, issuerKey: key, serial: try Self.serial(),
            notBefore: now.addingTimeInterval(-Self.backdating), notAfter: now.addingTimeInterval(Self.certificateLifetime)
        )
    }

    /// A random positive 128-bit serial number (RFC 5280 §4.1.2.2: unique per CA, at most
    /// 20 octets; random, as CA/Browser Forum practice asks, so none can be predicted).
    static func serial() throws -> Data {
        var bytes = try SecureRandom.bytes(count: 16)
        bytes[0] = bytes[0] & 0x7F | 0x40
        return bytes
    }
}
