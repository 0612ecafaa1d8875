import Foundation

/// One key's file, `keys/<handle>.json`.
///
/// The private key is PKCS#8 sealed with AES-256-GCM under the vault's sealing key, with
/// the format, handle and algorithm as associated data: the ciphertext opens under no
/// other handle. Every field, sealed key included, is then covered by an HMAC-SHA-256
/// under the vault's integrity key, so editing metadata or times by hand, or moving a
/// record to another file name, is detected without decrypting anything. Metadata
/// updates recompute only the HMAC; the private key is never unsealed for them.
struct VaultRecord: Codable {
    static let maximumSize = 256 * 1024

    var format: Int
    var handle: KeyHandle
    var algorithm: SigningAlgorithm
    /// base64url SubjectPublicKeyInfo DER.
    var publicKey: String
    /// base64url caller metadata.
    var metadata: String
    /// Seconds since 1970.
    var createdAt: Double
    var updatedAt: Double
    /// base64url AES-GCM nonce.
    var nonce: String
    /// base64url ciphertext ‖ tag of the PKCS#8 private key.
    var sealedKey: String
    /// base64url HMAC-SHA-256 of ``authenticatedBytes``.
    var mac: String

    /// The associated data the private key is sealed with.
    static func sealingContext(format: Int, handle: KeyHandle, algorithm: SigningAlgorithm) -> Data {
        Data("latchkey vault private key|format \(format)|\(handle.rawValue)|\(algorithm.joseName)".utf8)
    }

    /// Every field but the MAC, each length-prefixed, so no two records share a byte string.
    var authenticatedBytes: Data {
        var bytes = [UInt8]("latchkey vault record".utf8)
        bytes.reserveCapacity(64 + publicKey.utf8.count + metadata.utf8.count + sealedKey.utf8.count)
        func append(_ field: some Collection<UInt8>) {
            let length = UInt32(field.count)
            bytes.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
            bytes.append(contentsOf: field)
        }
        append(String(format).utf8)
        append(handle.rawValue.utf8)
        append(algorithm.joseName.utf8)
        append(publicKey.utf8)
        append(metadata.utf8)
        append(withUnsafeBytes(of: createdAt.bitPattern.bigEndian) { Array($0) })
        append(withUnsafeBytes(of: updatedAt.bitPattern.bigEndian) { Array($0) })
        append(nonce.utf8)
        append(sealedKey.utf8)
        return Data(bytes)
    }

    mutating func authenticate(with keys: VaultKeys) throws {
        mac = Base64URL.encode(try keys.integrity.authenticationCode(for: authenticatedBytes))
    }

    /// Parses and authenticates the bytes of `expectedHandle`'s record file. Errors name
    /// the handle and say what is wrong, never what the record holds.
    static func open(_ data: Data, expectedHandle: KeyHandle, keys: VaultKeys) throws -> VaultRecord {
        func corrupt(_ why: String) -> KeyVaultError {
            KeyVaultError(code: .corruptRecord, reason: "record \(expectedHandle): \(why)", handle: expectedHandle)
        }
        guard !data.isEmpty else { throw corrupt("empty file") }
        guard let object = try? FlatJSONObject(parsing: data) else {
            throw corrupt("not a vault record (truncated or damaged)")
        }
        // The format first, so a record from a newer Latchkey is reported as such even if
        // its other fields changed shape.
        guard let format = object.number("format").flatMap({ Int(exactly: $0) }) else {
            throw corrupt("no format version")
        }
        guard format == VaultHeader.currentFormat else {
            throw KeyVaultError(
                code: .unsupportedFormat,
                reason: "record \(expectedHandle) is format \(format); this Latchkey reads format \(VaultHeader.currentFormat) only",
                handle: expectedHandle
            )
        }
        guard let record = VaultRecord(object, format: format) else {
            throw corrupt("missing or malformed fields")
        }
        guard record.handle == expectedHandle else {
            throw corrupt("the record names another handle (moved or swapped)")
        }
        guard let mac = try? Base64URL.decode(record.mac),
              keys.integrity.isValidAuthenticationCode(mac, for: record.authenticatedBytes)
        else {
            throw corrupt("integrity check failed (edited, damaged or from another vault)")
        }
        return record
    }

    /// The entry this record describes (fields are authenticated; decoding is checked anyway).
    func entry() throws -> VaultEntry {
        guard let publicKeyDER = try? Base64URL.decode(publicKey), let metadataBytes = try? Base64URL.decode(metadata),
              let key = try? VerifyingKey(deferredSPKI: publicKeyDER)
        else {
            throw KeyVaultError(code: .corruptRecord, reason: "record \(handle): undecodable fields", handle: handle)
        }
        return VaultEntry(
            handle: handle,
            algorithm: algorithm,
            publicKey: key,
            metadata: metadataBytes,
            createdAt: Date(timeIntervalSince1970: createdAt),
            updatedAt: Date(timeIntervalSince1970: updatedAt)
        )
    }

    /// Unseals and parses the private key; the PKCS#8 plaintext is wiped afterwards.
    func signingKey(keys: VaultKeys) throws -> SigningKey {
        guard let nonceBytes = try? Base64URL.decode(nonce),
              let sealed = try? Base64URL.decode(sealedKey),
              sealed.count > AESGCM.tagByteCount
        else {
            throw KeyVaultError(code: .corruptRecord, reason: "record \(handle): undecodable sealed key", handle: handle)
        }
        let box = AESGCM.SealedBox(
            nonce: nonceBytes,
            ciphertext: sealed.dropLast(AESGCM.tagByteCount),
            tag: sealed.suffix(AESGCM.tagByteCount)
        )
        var pkcs8: Data
        do {
            pkcs8 = try AESGCM.open(box, using: keys.sealing, authenticating: Self.sealingContext(format: format, handle: handle, algorithm: algorithm))
        } catch {
            throw KeyVaultError(code: .corruptRecord, reason: "record \(handle): the private key does not decrypt", handle: handle)
        }
        defer { secureZero(&pkcs8) }
        guard let key = try? SigningKey(pkcs8DER: pkcs8), key.algorithm == algorithm,
              key.publicKey.spkiDER == (try? Base64URL.decode(publicKey))
        else {
            throw KeyVaultError(code: .corruptRecord, reason: "record \(handle): the private key does not match the record", handle: handle)
        }
        return key
    }
}

extension VaultRecord {
    /// The fields of a parsed record; nil if any is missing or of the wrong kind.
    fileprivate init?(_ object: FlatJSONObject, format: Int) {
        guard let handle = object.string("handle").flatMap(KeyHandle.init(rawValue:)),
              let algorithm = object.string("algorithm").flatMap(SigningAlgorithm.init(joseName:)),
              let publicKey = object.string("publicKey"),
              let metadata = object.string("metadata"),
              let createdAt = object.number("createdAt"),
              let updatedAt = object.number("updatedAt"),
              let nonce = object.string("nonce"),
              let sealedKey = object.string("sealedKey"),
              let mac = object.string("mac")
        else { return nil }
        self.init(
            format: format, handle: handle, algorithm: algorithm, publicKey: publicKey, metadata: metadata,
            createdAt: createdAt, updatedAt: updatedAt, nonce: nonce, sealedKey: sealedKey, mac: mac
        )
    }
}
