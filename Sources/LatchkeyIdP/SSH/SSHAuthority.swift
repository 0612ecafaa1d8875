import Foundation
import LatchkeyCrypto
import LatchkeyProtocol

/// The provider's SSH CA (`serve --ssh-ca`; docs/PROTOCOL.md section 12): its key, made
/// once and kept sealed in the store like the token signing keys, so every instance on the
/// same store signs with it; the lines `sshd`'s `TrustedUserCAKeys` and `ssh`'s
/// `@cert-authority` take; and the key revocation list `sshd`'s `RevokedKeys` reads.
struct SSHAuthority: Sendable {
    let context: ProviderContext

    /// The sealed store secret that holds the CA key (ES256, so `ecdsa-sha2-nistp256`).
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

    /// The CA key; `not_found` when the provider runs no SSH CA.
    func signingKey() async throws -> SigningKey {
        guard context.configuration.sshAuthority else { throw ProviderError.notFound("this provider runs no SSH CA (serve --ssh-ca)") }
        return try await context.sshAuthorityKey()
    }

    /// The CA's public keys, one OpenSSH line each: one in this version, which has no
    /// rotation; readers take every line, so a second key can be published beside it
    /// while one is rotated in (docs/PROTOCOL.md section 12).
    func publicKeyLines() async throws -> String {
        let key = try SSHPublicKey(try await signingKey().publicKey)
        return key.openSSHLine(comment: "latchkey-ssh-ca@\(context.issuer.host ?? "localhost")") + "\n"
    }

    /// The certificates to refuse before they expire, by serial: those issued on a
    /// credential since revoked or deleted (recovery revokes the old ones), for an
    /// identity since deleted, or to a client since deleted (a client registered again
    /// under its id is another registration). Expired certificates are left out: `sshd`
    /// refuses them anyway, so the list stays as short as the certificates' lifetime allows.
    func revocationList(now: Date = ProviderClock.now) async throws -> Data {
        let authority = try SSHPublicKey(try await signingKey().publicKey)
        let serials = try await revokedSerials(now: now)
        let seconds = UInt64(max(now.timeIntervalSince1970, 0))
        // The version only grows: the time it was made, in milliseconds.
        return SSHKeyRevocationList(
            version: UInt64(max(now.timeIntervalSince1970 * 1000, 0)), generatedAt: seconds, comment: "latchkey \(context.issuer.absoluteString)",
            revokedSerials: serials.isEmpty ? [:] : [authority: serials]
        ).wireBlob
    }

    /// The serials ``revocationList(now:)`` lists.
    func revokedSerials(now: Date = ProviderClock.now) async throws -> Set<UInt64> {
        let rows = try await context.database.read { transaction in
            try await transaction.query("""
                SELECT c.serial FROM ssh_certificates c
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
        return try Set(rows.map { UInt64(bitPattern: try $0.decode("serial", as: Int64.self)) })
    }
}
