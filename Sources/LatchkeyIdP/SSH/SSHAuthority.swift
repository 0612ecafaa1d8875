import Foundation
import LatchkeyCrypto
import LatchkeyProtocol

/// The provider's SSH CA (`serve --ssh-ca`; docs/PROTOCOL.md section 12): its key, made
/// once and kept sealed in the store like the token signing keys, so every instance on the
/// same store signs with it; the lines `sshd`'s `TrustedUserCAKeys` and `ssh`'s
/// `@cert-authority` take; and the key revocation list `sshd`'s `RevokedKeys` reads.
struct SSHAuthority: Sendable {
    let context: ProviderContext

    /// The sealed store secret that holds the CA's first key (ES256, so
    /// `ecdsa-sha2-nistp256`); keys rotated in are named after it (``SSHAuthorityKeyRing``).
    static let keyName = "ssh-ca-key"

    /// A key line from a request, or `invalid_ssh_key` saying why this CA will not certify
    /// it (`what` names it: "the host key").
    static func publicKey(_ line: String, _ what: String) throws -> SSHPublicKey {
        do {
            return try SSHPublicKey(openSSHLine: line)
        } catch let error as CryptoError {
            throw ProviderError.badRequest(.invalidSSHKey, "\(what) is not one this CA certifies: \(error.reason)", underlying: error)
        }
    }

    /// The key that signs now, and its name; `not_found` when the provider runs no SSH CA.
    func signingKey() async throws -> (name: String, key: SigningKey) {
        try await ready()
        return try await context.sshKeys.current()
    }

    /// `not_found` when the provider runs no SSH CA; the store prepared otherwise.
    func ready() async throws {
        guard context.configuration.sshAuthority else { throw ProviderError.notFound("this provider runs no SSH CA (serve --ssh-ca)") }
        try await context.prepare()
    }

    /// The CA's public keys, one OpenSSH line each, the one that signs first: during a
    /// rotation the next key too, and a retired one until its certificates have expired
    /// (``SSHAuthorityKeyRing``). Hosts trust every line.
    func publicKeyLines(now: Date = ProviderClock.now) async throws -> String {
        try await ready()
        let host = context.issuer.host ?? "localhost"
        return try await context.sshKeys.published(now: now).map { key in
            key.publicKey.openSSHLine(comment: "latchkey-ssh-ca@\(host)" + (key.state == .current ? "" : " \(key.state.rawValue)")) + "\n"
        }.joined()
    }

    /// The certificates to refuse before they expire, by serial: those issued on a
    /// credential since revoked or deleted (recovery revokes the old ones), for an
    /// identity since deleted, or to a client since deleted (a client registered again
    /// under its id is another registration). Expired certificates are left out: `sshd`
    /// refuses them anyway, so the list stays as short as the certificates' lifetime allows.
    ///
    /// Each serial is listed under the CA key that signed it (OpenSSH's KRL has a section
    /// of serials per CA key, PROTOCOL.krl), so a rotation keeps revoking what the retired
    /// key signed.
    func revocationList(now: Date = ProviderClock.now) async throws -> Data {
        try await ready()
        let keys = Dictionary(try await context.sshKeys.keys().map { ($0.name, $0.publicKey) }, uniquingKeysWith: { first, _ in first })
        var sections: [SSHPublicKey: Set<UInt64>] = [:]
        for (name, serials) in try await revokedSerialsByKey(now: now) {
            guard let key = keys[name] else { continue }
            sections[key, default: []].formUnion(serials)
        }
        let seconds = UInt64(max(now.timeIntervalSince1970, 0))
        // The version only grows: the time it was made, in milliseconds.
        return SSHKeyRevocationList(
            version: UInt64(max(now.timeIntervalSince1970 * 1000, 0)), generatedAt: seconds, comment: "latchkey \(context.issuer.absoluteString)",
            revokedSerials: sections
        ).wireBlob
    }

    /// The serials ``revocationList(now:)`` lists, whichever key signed them.
    func revokedSerials(now: Date = ProviderClock.now) async throws -> Set<UInt64> {
        try await revokedSerialsByKey(now: now).values.reduce(into: Set<UInt64>()) { $0.formUnion($1) }
    }

    /// The serials to refuse, by the name of the CA key that signed them (a certificate
    /// from before rotation existed was signed by the first key, ``keyName``).
    func revokedSerialsByKey(now: Date = ProviderClock.now) async throws -> [String: Set<UInt64>] {
        let rows = try await context.database.read { transaction in
            try await transaction.query("""
                SELECT c.serial, COALESCE(c.ca_key, \(Self.keyName)) AS ca_key FROM ssh_certificates c
                LEFT JOIN credentials k ON k.id = c.credential_id
                LEFT JOIN identities i ON i.id = c.identity_id
                LEFT JOIN clients r ON c.identity_id IS NULL AND r.id = c.client_id
                    AND (r.registration = c.client_registration OR (r.registration IS NULL AND c.client_registration IS NULL))
                WHERE c.valid_before > \(now) AND (
                    (c.identity_id IS NOT NULL AND (k.id IS NULL OR k.revoked_at IS NOT NULL OR i.id IS NULL))
                    OR (c.identity_id IS NULL AND r.id IS NULL))
                ORDER BY c.serial
                """)
        }
        var serials: [String: Set<UInt64>] = [:]
        for row in rows {
            serials[try row.decode("ca_key", as: String.self), default: []].insert(UInt64(bitPattern: try row.decode("serial", as: Int64.self)))
        }
        return serials
    }
}
