#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One key's file, `keys/<handle>.json`.
///
/// Format 2 (written by this version) keeps nothing about the key in clear but its handle
/// (the file name, random): the algorithm, public key, caller metadata and times are one
/// "details" document sealed with AES-256-GCM under the vault's details key, bound to the
/// handle as associated data, so a copy of the vault does not say whom this host signs in
/// as, where, or how often (docs/SECURITY.md, "The vault"). The private key is PKCS#8
/// sealed under the sealing key with the format it was sealed in, the handle and the
/// algorithm as associated data. Every field on disk is then covered by an HMAC-SHA-256
/// under the integrity key, so an edited, truncated or moved record is detected before
/// anything is decrypted. Metadata updates re-seal the details; the private key is never
/// unsealed for them.
///
/// A TPM key (``KeyProtection/tpm``) keeps its TPM-wrapped blob where a software key keeps
/// its PKCS#8, sealed the same way under its own associated data, and says so in the
/// details (`"protection":"tpm"`; absent means software, as every format-1 record is).
///
/// Format 1 kept the details in clear under the same HMAC. It is still read, and rewritten
/// as format 2 by the vault's migration (``KeyVault/open(at:key:allowingWeakPassphrase:)``).
struct VaultRecord {
    static let maximumSize = 256 * 1024

    var handle: KeyHandle
    var algorithm: SigningAlgorithm
    /// base64url SubjectPublicKeyInfo DER.
    var publicKey: String
    /// base64url caller metadata.
    var metadata: String
    /// Seconds since 1970.
    var createdAt: Double
    var updatedAt: Double
    /// The format whose associated data the private key was sealed with (1 for a key
    /// created before format 2: migration never unseals a private key).
    var keyFormat: Int
    /// base64url AES-GCM nonce.
    var nonce: String
    /// base64url ciphertext ‖ tag of the PKCS#8 private key.
    var sealedKey: String
    /// The format the record was read in; it is always written in the current one.
    var storedFormat: Int
    /// What `sealedKey` holds: PKCS#8 (software) or a TPM-wrapped blob (tpm).
    var protection: KeyProtection = .software

    /// The associated data the private key is sealed with.
    static func sealingContext(format: Int, handle: KeyHandle, algorithm: SigningAlgorithm, protection: KeyProtection = .software) -> Data {
        switch protection {
        case .software: Data("latchkey vault private key|format \(format)|\(handle.rawValue)|\(algorithm.joseName)".utf8)
        case .tpm: Data("latchkey vault tpm key blob|format \(format)|\(handle.rawValue)|\(algorithm.joseName)".utf8)
        }
    }

    /// The associated data the details are sealed with.
    static func detailsContext(handle: KeyHandle) -> Data {
        Data("latchkey vault record details|format 2|\(handle.rawValue)".utf8)
    }

    /// `fields`, each length-prefixed after `label`, so no two records share a byte string.
    static func macInput(_ label: String, _ fields: [[UInt8]]) -> Data {
        var bytes = [UInt8](label.utf8)
        bytes.reserveCapacity(bytes.count + fields.reduce(0) { $0 + $1.count + 4 })
        for field in fields {
            let length = UInt32(field.count)
            bytes.append(contentsOf: [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
            bytes.append(contentsOf: field)
        }
        return Data(bytes)
    }

    // MARK: Writing (format 2)

    /// The record file's bytes in the current format: details sealed, every field MACed.
    func encoded(keys: VaultKeys) throws -> Data {
        var details = "{\"algorithm\":\"\(algorithm.joseName)\",\"publicKey\":\"\(publicKey)\",\"metadata\":\"\(metadata)\","
        details += "\"createdAt\":\(Self.number(createdAt)),\"updatedAt\":\(Self.number(updatedAt)),\"keyFormat\":\(keyFormat)"
        details += protection == .software ? "}" : ",\"protection\":\"\(protection.rawValue)\"}"
        var plaintext = Data(details.utf8)
        defer { secureZero(&plaintext) }
        let box = try AESGCM.seal(plaintext, using: keys.details, authenticating: Self.detailsContext(handle: handle))
        let sealedDetails = Base64URL.encode(box.nonce + box.ciphertext + box.tag)
        let format = VaultHeader.currentFormat
        let mac = Base64URL.encode(try keys.integrity.authenticationCode(for: Self.macInput("latchkey vault record v2", [
            Array(String(format).utf8), Array(handle.rawValue.utf8), Array(sealedDetails.utf8), Array(nonce.utf8), Array(sealedKey.utf8),
        ])))
        let text = "{\"details\":\"\(sealedDetails)\",\"format\":\(format),\"handle\":\"\(handle.rawValue)\",\"mac\":\"\(mac)\",\"nonce\":\"\(nonce)\",\"sealedKey\":\"\(sealedKey)\"}"
        return Data(text.utf8)
    }

    /// A time as JSON: the shortest text that reads back as the same Double.
    private static func number(_ value: Double) -> String {
        value.isFinite ? "\(value)" : "0"
    }

    // MARK: Reading

    /// Parses and authenticates the bytes of `expectedHandle`'s record file, format 1 or 2.
    /// Errors name the handle and say what is wrong, never what the record holds.
    static func open(_ data: Data, expectedHandle: KeyHandle, keys: VaultKeys) throws -> VaultRecord {
        func corrupt(_ why: String) -> KeyVaultError {
            KeyVaultError.corruptRecord(reason: "record \(expectedHandle): \(why)", handle: expectedHandle)
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
        guard (1...VaultHeader.currentFormat).contains(format) else {
            throw KeyVaultError.unsupportedFormat(reason: "record \(expectedHandle) is format \(format); this Latchkey reads formats 1 to \(VaultHeader.currentFormat)",
                handle: expectedHandle
            )
        }
        guard object.string("handle") == expectedHandle.rawValue else {
            throw object.string("handle") == nil ? corrupt("missing or malformed fields") : corrupt("the record names another handle (moved or swapped)")
        }
        return format == 1 ? try openFormat1(object, handle: expectedHandle, keys: keys, corrupt: corrupt)
            : try openFormat2(object, handle: expectedHandle, keys: keys, corrupt: corrupt)
    }

    private static func openFormat2(
        _ object: FlatJSONObject, handle: KeyHandle, keys: VaultKeys, corrupt: (String) -> KeyVaultError
    ) throws -> VaultRecord {
        guard let sealedDetails = object.string("details"), let nonce = object.string("nonce"),
              let sealedKey = object.string("sealedKey"), let mac = object.string("mac").flatMap({ try? Base64URL.decode($0) })
        else { throw corrupt("missing or malformed fields") }
        let input = macInput("latchkey vault record v2", [
            Array("2".utf8), Array(handle.rawValue.utf8), Array(sealedDetails.utf8), Array(nonce.utf8), Array(sealedKey.utf8),
        ])
        guard keys.integrity.isValidAuthenticationCode(mac, for: input) else {
            throw corrupt("integrity check failed (edited, damaged or from another vault)")
        }
        guard let sealed = try? Base64URL.decode(sealedDetails), sealed.count > AESGCM.nonceByteCount + AESGCM.tagByteCount else {
            throw corrupt("undecodable details")
        }
        let box = AESGCM.SealedBox(
            nonce: sealed.prefix(AESGCM.nonceByteCount),
            ciphertext: sealed.dropFirst(AESGCM.nonceByteCount).dropLast(AESGCM.tagByteCount),
            tag: sealed.suffix(AESGCM.tagByteCount)
        )
        guard var plaintext = try? AESGCM.open(box, using: keys.details, authenticating: detailsContext(handle: handle)) else {
            throw corrupt("the details do not decrypt")
        }
        defer { secureZero(&plaintext) }
        guard let details = try? FlatJSONObject(parsing: plaintext),
              let algorithm = details.string("algorithm").flatMap(SigningAlgorithm.init(joseName:)),
              let publicKey = details.string("publicKey"), let metadata = details.string("metadata"),
              let createdAt = details.number("createdAt"), let updatedAt = details.number("updatedAt"),
              let keyFormat = details.number("keyFormat").flatMap({ Int(exactly: $0) }), (1...VaultHeader.currentFormat).contains(keyFormat)
        else { throw corrupt("malformed details") }
        let protection: KeyProtection
        switch details.string("protection") {
        case nil: protection = .software
        case let name?:
            // A kind of key storage this version does not know is reported, never guessed.
            guard let known = KeyProtection(rawValue: name), known != .tpm || algorithm == .es256 else {
                throw KeyVaultError.unsupportedFormat(reason: "record \(handle) keeps its key in a way this Latchkey does not know", handle: handle
                )
            }
            protection = known
        }
        return VaultRecord(
            handle: handle, algorithm: algorithm, publicKey: publicKey, metadata: metadata, createdAt: createdAt, updatedAt: updatedAt,
            keyFormat: keyFormat, nonce: nonce, sealedKey: sealedKey, storedFormat: 2, protection: protection
        )
    }

    /// Format 1: every field in clear, under the HMAC.
    private static func openFormat1(
        _ object: FlatJSONObject, handle: KeyHandle, keys: VaultKeys, corrupt: (String) -> KeyVaultError
    ) throws -> VaultRecord {
        guard let algorithmName = object.string("algorithm"), let algorithm = SigningAlgorithm(joseName: algorithmName),
              let publicKey = object.string("publicKey"), let metadata = object.string("metadata"),
              let createdAt = object.number("createdAt"), let updatedAt = object.number("updatedAt"),
              let nonce = object.string("nonce"), let sealedKey = object.string("sealedKey"),
              let mac = object.string("mac").flatMap({ try? Base64URL.decode($0) })
        else { throw corrupt("missing or malformed fields") }
        let input = macInput("latchkey vault record", [
            Array("1".utf8), Array(handle.rawValue.utf8), Array(algorithm.joseName.utf8), Array(publicKey.utf8), Array(metadata.utf8),
            withUnsafeBytes(of: createdAt.bitPattern.bigEndian) { Array($0) }, withUnsafeBytes(of: updatedAt.bitPattern.bigEndian) { Array($0) },
            Array(nonce.utf8), Array(sealedKey.utf8),
        ])
        guard keys.integrity.isValidAuthenticationCode(mac, for: input) else {
            throw corrupt("integrity check failed (edited, damaged or from another vault)")
        }
        return VaultRecord(
            handle: handle, algorithm: algorithm, publicKey: publicKey, metadata: metadata, createdAt: createdAt, updatedAt: updatedAt,
            keyFormat: 1, nonce: nonce, sealedKey: sealedKey, storedFormat: 1
        )
    }

    /// The entry this record describes (fields are authenticated; decoding is checked anyway).
    func entry() throws -> VaultEntry {
        guard let publicKeyDER = try? Base64URL.decode(publicKey), let metadataBytes = try? Base64URL.decode(metadata),
              let key = try? VerifyingKey(deferredSPKI: publicKeyDER)
        else {
            throw KeyVaultError.corruptRecord(reason: "record \(handle): undecodable fields", handle: handle)
        }
        return VaultEntry(
            handle: handle,
            algorithm: algorithm,
            publicKey: key,
            metadata: metadataBytes,
            createdAt: Date(timeIntervalSince1970: createdAt),
            updatedAt: Date(timeIntervalSince1970: updatedAt),
            protection: protection
        )
    }

    /// The record's key, ready to sign: a software key unsealed and parsed, or a TPM key's
    /// blob unsealed (loaded into the TPM only when it signs).
    func deviceKey(keys: VaultKeys) throws -> DeviceSigningKey {
        switch protection {
        case .software:
            return .software(try signingKey(keys: keys))
        case .tpm:
            let blob = try unsealed(keys: keys)
            guard let publicKeyDER = try? Base64URL.decode(publicKey), let key = try? VerifyingKey(spkiDER: publicKeyDER) else {
                throw KeyVaultError.corruptRecord(reason: "record \(handle): undecodable public key", handle: handle)
            }
            let tpm: TPM
            do {
                tpm = try TPM.system()
            } catch let error as CryptoError {
                throw KeyVaultError(tpm: error, handle: handle)
            }
            return .tpm(try TPMSigningKey(wrappedKey: blob, publicKey: key, in: tpm))
        }
    }

    /// The sealed key's plaintext (PKCS#8 or a TPM blob); the caller wipes it.
    func unsealed(keys: VaultKeys) throws -> Data {
        guard let nonceBytes = try? Base64URL.decode(nonce),
              let sealed = try? Base64URL.decode(sealedKey),
              sealed.count > AESGCM.tagByteCount
        else {
            throw KeyVaultError.corruptRecord(reason: "record \(handle): undecodable sealed key", handle: handle)
        }
        let box = AESGCM.SealedBox(
            nonce: nonceBytes,
            ciphertext: sealed.dropLast(AESGCM.tagByteCount),
            tag: sealed.suffix(AESGCM.tagByteCount)
        )
        do {
            let context = Self.sealingContext(format: keyFormat, handle: handle, algorithm: algorithm, protection: protection)
            return try AESGCM.open(box, using: keys.sealing, authenticating: context)
        } catch {
            throw KeyVaultError.corruptRecord(reason: "record \(handle): the private key does not decrypt", handle: handle, underlying: error)
        }
    }

    /// Unseals and parses a software private key; the PKCS#8 plaintext is wiped afterwards.
    private func signingKey(keys: VaultKeys) throws -> SigningKey {
        var pkcs8 = try unsealed(keys: keys)
        defer { secureZero(&pkcs8) }
        guard let key = try? SigningKey(pkcs8DER: pkcs8), key.algorithm == algorithm,
              key.publicKey.spkiDER == (try? Base64URL.decode(publicKey))
        else {
            throw KeyVaultError.corruptRecord(reason: "record \(handle): the private key does not match the record", handle: handle)
        }
        return key
    }
}
