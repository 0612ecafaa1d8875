#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The vault's header file, `vault.json`: format version, how the vault key is obtained,
/// and a key check value that tells a wrong key from a damaged record before any record
/// is touched.
struct VaultHeader: Codable {
    /// The format this code writes. It reads every format from 1 up; a higher number is
    /// refused, never guessed at. Format 2 seals each record's details (``VaultRecord``);
    /// a format-1 vault is migrated when opened.
    static let currentFormat = 2
    static let fileName = "vault.json"
    static let maximumSize = 4096

    enum KeyKind: String, Codable {
        /// A passphrase stretched with scrypt.
        case scrypt
        /// 32 raw bytes from a key file or a systemd credential.
        case raw
        /// A random key sealed by the host's TPM (``TPMSealedVaultKey``).
        case tpm
    }

    var format: Int
    var keyKind: KeyKind
    /// base64url scrypt salt (scrypt only).
    var salt: String?
    var scrypt: Scrypt.Parameters?
    /// The TPM-sealed root key (tpm only).
    var tpm: TPMSealedVaultKey?
    /// base64url HMAC-SHA-256 under the key-check key (see ``VaultKeys``).
    var keyCheck: String

    static func decode(_ data: Data, path: String) throws -> VaultHeader {
        // The format is read on its own first, so a newer header is reported as such even
        // when the rest of it has changed shape.
        struct FormatOnly: Decodable { var format: Int }
        guard let format = try? JSONDecoder().decode(FormatOnly.self, from: data) else {
            throw KeyVaultError.notAVault(reason: "\(path) is not a Latchkey vault header")
        }
        guard (1...currentFormat).contains(format.format) else {
            throw KeyVaultError.unsupportedFormat(reason: "\(path) is vault format \(format.format); this Latchkey reads formats 1 to \(currentFormat) (upgrade Latchkey to open it)"
            )
        }
        do {
            return try JSONDecoder().decode(VaultHeader.self, from: data)
        } catch {
            throw KeyVaultError.notAVault(reason: "\(path) is a damaged vault header", underlying: error)
        }
    }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return try encoder.encode(self)
    }
}

/// The keys a vault works with, all derived from the root key (the scrypt output or the
/// raw 32 bytes) with HKDF-SHA-256 (RFC 5869) under distinct labels, so the stored key
/// check value says nothing about the sealing or integrity keys.
struct VaultKeys: Sendable {
    /// AES-256-GCM key that seals private keys.
    let sealing: SymmetricKey
    /// AES-256-GCM key that seals each record's details (format 2).
    let details: SymmetricKey
    /// HMAC-SHA-256 over each whole record, key prepared once.
    let integrity: PreparedHMAC
    /// The key check value for the header.
    let keyCheck: Data

    init(root: SymmetricKey) throws {
        func derive(_ label: String) throws -> SymmetricKey {
            try HKDF.deriveKey(inputKeyMaterial: root, info: Data("latchkey vault v1 \(label)".utf8), outputByteCount: 32)
        }
        sealing = try derive("sealing key")
        details = try derive("record details key")
        integrity = try PreparedHMAC(key: derive("record integrity key"))
        keyCheck = try HMAC.authenticationCode(for: Data("latchkey vault key check".utf8), using: derive("key check key"))
    }
}
