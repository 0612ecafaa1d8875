#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Dispatch
import Glibc
import Synchronization

/// Device key pairs at rest: a directory of records, each holding one key's private half
/// sealed under the vault key, written atomically and durably, with one writer at a time
/// across processes.
///
/// Layout (docs/ARCHITECTURE.md, "The crypto core"; its protections: docs/SECURITY.md, "The vault"):
///
/// ```
/// <directory>/            0700
///   vault.json            0600  format, key kind, scrypt salt and parameters or the
///                               TPM-sealed key, key check
///   .lock                 0600  flock target for writers
///   .lock-<name>          0600  flock targets of withExclusiveAccess(_:timeout:_:)
///   keys/                 0700
///     <handle>.json       0600  one record per key, its details sealed (see VaultRecord)
/// ```
///
/// Guarantees:
/// - No private key byte is written in clear; keys held in memory are in OpenSSL's care
///   and the PKCS#8 plaintext is wiped after each seal and unseal.
/// - A wrong passphrase or key is reported as ``KeyVaultError/Code/wrongKey`` from the
///   header's key check, before any record is read.
/// - Writes go to a temporary file, `fsync`, `rename`, `fsync` of the directory: a crash
///   at any instant leaves each record old or new, never torn. Writers serialise on
///   `flock`, so read-modify-write (``updateMetadata(_:_:)``) is safe across processes.
/// - A damaged record is reported with its handle and never hides, rewrites or deletes
///   the others (``scan()``).
/// - Directories and files open to group or others are refused, as ssh refuses a loose
///   private key.
///
/// A `KeyVault` is safe to share between tasks. It keeps each private key it has
/// unsealed, parsed, so signing costs a signature, not a PKCS#8 decode (~660 µs in
/// OpenSSL 3.0).
public final class KeyVault: KeyStore, Sendable {
    /// The most metadata a key may carry.
    public static let maximumMetadataByteCount = 64 * 1024

    /// The vault's directory.
    public let directory: URL
    private let keysDirectory: String
    private let lockPath: String
    private let keys: VaultKeys
    private let unsealed = Mutex<[KeyHandle: DeviceSigningKey]>([:])

    private init(directory: URL, keys: VaultKeys) {
        self.directory = directory
        self.keysDirectory = directory.path + "/keys"
        self.lockPath = directory.path + "/.lock"
        self.keys = keys
    }

    /// The default location: `$XDG_DATA_HOME/latchkey`, else `~/.local/share/latchkey`.
    public static var defaultDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return URL(fileURLWithPath: data).appendingPathComponent("latchkey")
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share/latchkey")
    }

    /// Opens the vault in `directory`, creating it when the directory is absent or empty.
    ///
    /// Throws ``KeyVaultError`` with ``KeyVaultError/Code/wrongKey`` for a wrong passphrase
    /// or key, ``KeyVaultError/Code/insecurePermissions`` for a directory or file open to
    /// group or others, ``KeyVaultError/Code/unsupportedFormat`` for a vault from a newer
    /// Latchkey, ``KeyVaultError/Code/notAVault`` for a directory holding other things, and
    /// ``KeyVaultError/Code/weakPassphrase`` when a new vault's passphrase is weak
    /// (``VaultKeySource/weakness(ofPassphrase:)``) and `allowingWeakPassphrase` is false. An
    /// existing vault opens whatever its passphrase.
    public static func open(at directory: URL, key source: VaultKeySource, allowingWeakPassphrase: Bool = false) throws -> KeyVault {
        let source = try source.resolved()
        let path = directory.standardizedFileURL.path
        let parent = PathText.parent(of: path)
        if try VaultFiles.status(parent) == nil {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        }
        try VaultFiles.ensurePrivateDirectory(path, followLink: true)
        let headerPath = path + "/" + VaultHeader.fileName

        let header: VaultHeader
        let root: SymmetricKey
        if try VaultFiles.status(headerPath) != nil {
            header = try VaultHeader.decode(VaultFiles.readFile(headerPath, maximumSize: VaultHeader.maximumSize), path: headerPath)
            root = try rootKey(for: header, source: source)
        } else {
            (header, root) = try VaultFiles.withExclusiveLock(path + "/.lock") {
                // Another process may have created it while we waited for the lock.
                if try VaultFiles.status(headerPath) != nil {
                    let header = try VaultHeader.decode(VaultFiles.readFile(headerPath, maximumSize: VaultHeader.maximumSize), path: headerPath)
                    return (header, try rootKey(for: header, source: source))
                }
                return try create(at: path, headerPath: headerPath, source: source, allowingWeakPassphrase: allowingWeakPassphrase)
            }
        }
        let keys = try VaultKeys(root: root)
        guard let stored = try? Base64URL.decode(header.keyCheck), ConstantTime.isEqual(stored, keys.keyCheck) else {
            throw KeyVaultError.wrongKey(reason: header.keyKind == .scrypt ? "wrong passphrase for the vault at \(path)" : "wrong key for the vault at \(path)"
            )
        }
        let vault = KeyVault(directory: URL(fileURLWithPath: path), keys: keys)
        try vault.checkFiles()
        if header.format < VaultHeader.currentFormat {
            try vault.migrate(headerPath: headerPath)
        }
        return vault
    }

    /// Rewrites a format-1 vault as format 2 (each record's details sealed, see
    /// ``VaultRecord``), under the write lock. Crash-safe: each record is replaced
    /// atomically and the header's format is raised last, so a migration killed midway
    /// leaves a vault that opens (both formats are read) and finishes on the next open.
    /// A record that cannot be read is left as it is, to be reported, never dropped.
    /// Private keys are not unsealed: they keep the associated data they were sealed with.
    private func migrate(headerPath: String) throws {
        try VaultFiles.withExclusiveLock(lockPath) {
            // Another process may have finished it while this one waited for the lock.
            let header = try VaultHeader.decode(VaultFiles.readFile(headerPath, maximumSize: VaultHeader.maximumSize), path: headerPath)
            guard header.format < VaultHeader.currentFormat else { return }
            for name in try VaultFiles.names(in: keysDirectory) where name.hasSuffix(".json") {
                guard let handle = KeyHandle(rawValue: String(name.dropLast(5))),
                      let record = try? readRecord(handle), record.storedFormat < VaultHeader.currentFormat
                else { continue }
                try writeRecord(record)
            }
            var upgraded = header
            upgraded.format = VaultHeader.currentFormat
            try VaultFiles.writeAtomically(upgraded.encoded(), to: headerPath, directory: directory.path)
        }
    }

    /// Writes a new vault's header and keys directory (caller holds the lock).
    private static func create(at path: String, headerPath: String, source: VaultKeySource, allowingWeakPassphrase: Bool) throws -> (VaultHeader, SymmetricKey) {
        if case .passphrase(let passphrase, _) = source, !allowingWeakPassphrase, let weakness = VaultKeySource.weakness(ofPassphrase: passphrase) {
            throw KeyVaultError.weakPassphrase(reason: weakness + "; nothing was created")
        }
        let allowed: Set<String> = [".lock", "keys"]
        let present = try VaultFiles.names(in: path)
        // A creation killed before its header's rename leaves the header's temporary file
        // (the soak found one: every later command then refused the directory). Nothing
        // was ever stored in such a vault, so the leftover goes and creation starts over.
        let leftovers = present.filter { $0.hasPrefix(VaultFiles.temporaryPrefix) }
        let keysEmpty = (try? VaultFiles.names(in: path + "/keys").isEmpty) ?? true
        guard Set(present).subtracting(leftovers).isSubset(of: allowed), keysEmpty else {
            throw KeyVaultError.notAVault(reason: "\(path) is not empty and has no \(VaultHeader.fileName); choose an empty or new directory for a vault"
            )
        }
        for name in leftovers {
            _ = try VaultFiles.remove(path + "/" + name, directory: path)
        }
        var header = VaultHeader(format: VaultHeader.currentFormat, keyKind: source.kind, keyCheck: "")
        let root: SymmetricKey
        switch source {
        case .passphrase(let passphrase, let parameters):
            let salt = try SecureRandom.bytes(count: 16)
            header.salt = Base64URL.encode(salt)
            header.scrypt = parameters
            root = try stretch(passphrase, salt: salt, parameters: parameters)
        case .keyFile, .systemdCredential:
            root = try source.rawKey()
        case .tpm:
            (header.tpm, root) = try TPMSealedVaultKey.create()
        case .deferred:
            throw KeyVaultError.keySourceUnavailable(reason: "the vault key source was not resolved")
        }
        header.keyCheck = Base64URL.encode(try VaultKeys(root: root).keyCheck)
        try VaultFiles.ensurePrivateDirectory(path + "/keys", followLink: false)
        try VaultFiles.writeAtomically(header.encoded(), to: headerPath, directory: path)
        return (header, root)
    }

    /// scrypt of `passphrase`; the byte copy made for OpenSSL is wiped afterwards. (The
    /// caller's `String` cannot be wiped: Swift strings are immutable values.)
    private static func stretch(_ passphrase: String, salt: Data, parameters: Scrypt.Parameters) throws -> SymmetricKey {
        var password = Data(passphrase.utf8)
        defer { secureZero(&password) }
        return try Scrypt.deriveKey(password: password, salt: salt, parameters: parameters)
    }

    /// The root key for an existing vault, from the source the header says it needs.
    private static func rootKey(for header: VaultHeader, source: VaultKeySource) throws -> SymmetricKey {
        guard header.keyKind == source.kind else {
            let needs = switch header.keyKind {
            case .scrypt: "a passphrase"
            case .raw: "a key file or systemd credential"
            case .tpm: "its key sealed by this host's TPM (Latchkey's VaultKeySource.tpm; the command line's --vault-key tpm)"
            }
            throw KeyVaultError.keySourceMismatch(reason: "this vault opens with \(needs), not with the key given")
        }
        switch source {
        case .passphrase(let passphrase, _):
            guard let salt = header.salt.flatMap({ try? Base64URL.decode($0) }), let parameters = header.scrypt else {
                throw KeyVaultError.notAVault(reason: "the vault header lacks its scrypt salt or parameters")
            }
            do {
                return try stretch(passphrase, salt: salt, parameters: parameters)
            } catch let error as CryptoError where error.code == .invalidParameter {
                throw KeyVaultError.notAVault(reason: "the vault header's scrypt parameters are out of bounds: \(error.reason)")
            }
        case .keyFile, .systemdCredential:
            return try source.rawKey()
        case .tpm:
            guard let sealed = header.tpm else {
                throw KeyVaultError.notAVault(reason: "the vault header lacks its TPM-sealed key")
            }
            return try sealed.unseal()
        case .deferred:
            throw KeyVaultError.keySourceUnavailable(reason: "the vault key source was not resolved")
        }
    }

    /// Checks permissions of everything in the vault and removes temporary files that a
    /// killed writer left (under the lock, when no writer can be mid-write).
    private func checkFiles() throws {
        let root = directory.path
        try VaultFiles.ensurePrivateDirectory(keysDirectory, followLink: false)
        for path in [root + "/" + VaultHeader.fileName, lockPath] {
            if let status = try VaultFiles.status(path) {
                try VaultFiles.checkPrivate(status, path: path, isDirectory: false)
            }
        }
        var strayTemporaries = false
        for name in try VaultFiles.names(in: keysDirectory) {
            let path = keysDirectory + "/" + name
            if let status = try VaultFiles.status(path) {
                try VaultFiles.checkPrivate(status, path: path, isDirectory: status.st_mode & S_IFMT == S_IFDIR)
            }
            strayTemporaries = strayTemporaries || name.hasPrefix(VaultFiles.temporaryPrefix)
        }
        if strayTemporaries {
            try VaultFiles.withExclusiveLock(lockPath) {
                for name in try VaultFiles.names(in: keysDirectory) where name.hasPrefix(VaultFiles.temporaryPrefix) {
                    _ = try VaultFiles.remove(keysDirectory + "/" + name, directory: keysDirectory)
                }
            }
        }
    }

    // MARK: Records

    private func recordPath(_ handle: KeyHandle) -> String {
        keysDirectory + "/" + handle.rawValue + ".json"
    }

    /// Reads and authenticates `handle`'s record; `directory`, when given, is an open
    /// descriptor of the keys directory (for listings).
    private func readRecord(_ handle: KeyHandle, directory: Int32? = nil) throws -> VaultRecord {
        let path = recordPath(handle)
        let data: Data
        do {
            data = try VaultFiles.readFile(path, in: directory, name: handle.rawValue + ".json", maximumSize: VaultRecord.maximumSize)
        } catch var error as KeyVaultError {
            error.handle = handle
            if error.code == .keyNotFound { error.reason = "no key \(handle) in the vault" }
            throw error
        }
        return try VaultRecord.open(data, expectedHandle: handle, keys: keys)
    }

    private func writeRecord(_ record: VaultRecord) throws {
        try VaultFiles.writeAtomically(record.encoded(keys: keys), to: recordPath(record.handle), directory: keysDirectory)
    }

    // MARK: Public operations

    /// Generates a key of `algorithm`, seals it and stores it with `metadata`.
    ///
    /// With ``KeyProtection/tpm`` the key is generated inside the host's TPM
    /// (``TPM/system()``) and the record keeps only its TPM-wrapped blob; only ES256 can be
    /// (``KeyVaultError/Code/unsupportedProtection`` otherwise, before the TPM is asked).
    /// A missing TPM is ``KeyVaultError/Code/tpmUnavailable``.
    public func createKey(_ algorithm: SigningAlgorithm, metadata: Data, protection: KeyProtection = .software) throws -> VaultEntry {
        try Self.checkMetadataSize(metadata)
        let handle = try KeyHandle.random()
        let context = VaultRecord.sealingContext(format: VaultHeader.currentFormat, handle: handle, algorithm: algorithm, protection: protection)
        let key: DeviceSigningKey
        let box: AESGCM.SealedBox
        let publicKey: VerifyingKey
        switch protection {
        case .software:
            let software = try SigningKey.generate(algorithm)
            box = try software.withPKCS8DER { try AESGCM.seal($0, using: keys.sealing, authenticating: context) }
            (key, publicKey) = (.software(software), software.publicKey)
        case .tpm:
            guard algorithm == .es256 else {
                throw KeyVaultError.unsupportedProtection(reason: "a TPM key is ES256 (P-256) only: TPMs have no \(algorithm.joseName); use software protection for it"
                )
            }
            let tpmKey: TPMSigningKey
            do {
                tpmKey = try TPMSigningKey.generate(in: TPM.system())
            } catch let error as CryptoError {
                throw KeyVaultError(tpm: error)
            }
            box = try AESGCM.seal(tpmKey.wrappedKey, using: keys.sealing, authenticating: context)
            (key, publicKey) = (.tpm(tpmKey), tpmKey.publicKey)
        }
        let record = try addRecord(handle, algorithm: algorithm, protection: protection, publicKey: publicKey, metadata: metadata, sealed: box)
        if case .software = key { unsealed.withLock { $0[handle] = key } }
        return try record.entry()
    }

    /// Keeps a key a TPM made outside the vault (an attestation key, made through ESAPI:
    /// `TPMAttestationKey`) as a TPM key record with `metadata`, sealed like any other.
    public func storeKey(_ key: TPMSigningKey, metadata: Data) throws -> VaultEntry {
        try Self.checkMetadataSize(metadata)
        let handle = try KeyHandle.random()
        let context = VaultRecord.sealingContext(format: VaultHeader.currentFormat, handle: handle, algorithm: .es256, protection: .tpm)
        let box = try AESGCM.seal(key.wrappedKey, using: keys.sealing, authenticating: context)
        return try addRecord(handle, algorithm: .es256, protection: .tpm, publicKey: key.publicKey, metadata: metadata, sealed: box).entry()
    }

    /// Writes a new key's record, its private key sealed in `box`, under the writers' lock;
    /// a handle already taken (a collision of 128 random bits) is refused, never overwritten.
    private func addRecord(
        _ handle: KeyHandle, algorithm: SigningAlgorithm, protection: KeyProtection, publicKey: VerifyingKey, metadata: Data, sealed box: AESGCM.SealedBox
    ) throws -> VaultRecord {
        let now = Date().timeIntervalSince1970
        let record = VaultRecord(
            handle: handle, algorithm: algorithm, publicKey: Base64URL.encode(publicKey.spkiDER), metadata: Base64URL.encode(metadata),
            createdAt: now, updatedAt: now, keyFormat: VaultHeader.currentFormat, nonce: Base64URL.encode(box.nonce),
            sealedKey: Base64URL.encode(box.ciphertext + box.tag), storedFormat: VaultHeader.currentFormat, protection: protection
        )
        try VaultFiles.withExclusiveLock(lockPath) {
            guard try VaultFiles.status(recordPath(handle)) == nil else {
                throw KeyVaultError.fileSystem(reason: "key handle collision", handle: handle)
            }
            try writeRecord(record)
        }
        return record
    }

    /// Refuses metadata over ``maximumMetadataByteCount`` (``KeyVaultError/Code/metadataTooLarge``).
    public static func checkMetadataSize(_ metadata: Data, handle: KeyHandle? = nil) throws {
        guard metadata.count <= maximumMetadataByteCount else {
            throw KeyVaultError.metadataTooLarge(reason: "metadata of \(metadata.count) bytes; at most \(maximumMetadataByteCount)", handle: handle)
        }
    }

    /// The TPM key of `handle`, for the TPM commands the vault does not run itself
    /// (TPM2_Certify of a credential key by an attestation key, `TPM.certify`). Its blob
    /// is useless without the TPM that made it. ``KeyVaultError/Code/unsupportedProtection``
    /// for a software key, whose private key never leaves the vault.
    public func tpmKey(_ handle: KeyHandle) throws -> TPMSigningKey {
        guard case .tpm(let key) = try signingKey(handle) else {
            throw KeyVaultError.unsupportedProtection(reason: "key \(handle) is not a TPM key", handle: handle)
        }
        return key
    }

    /// Processors to read a large vault with (read once: `activeProcessorCount` asks the
    /// system on every call).
    private static let processorCount = ProcessInfo.processInfo.activeProcessorCount

    /// Reads every record: the sound entries, sorted by creation time, and one error per
    /// record that cannot be read or authenticated, naming its handle.
    public func scan() throws -> VaultScan {
        let names = try VaultFiles.names(in: keysDirectory)
        let handles = names.compactMap { name in
            name.hasSuffix(".json") ? KeyHandle(rawValue: String(name.dropLast(5))) : nil
        }
        // Records are independent; two cores read them twice as fast. Each worker collects
        // its own results and hands them over once.
        let chunks = max(1, min(Self.processorCount, handles.count / 256))
        let collected = ScanCollector()
        try VaultFiles.withDirectory(keysDirectory) { directory in
            @Sendable func readChunk(_ chunk: Int) {
                var part = VaultScan(entries: [], problems: [])
                part.entries.reserveCapacity(handles.count / chunks + 1)
                var index = chunk
                while index < handles.count {
                    let handle = handles[index]
                    do {
                        part.entries.append(try readRecord(handle, directory: directory).entry())
                    } catch let error as KeyVaultError {
                        // A record deleted between listing and reading is simply gone.
                        if error.code != .keyNotFound { part.problems.append(error) }
                    } catch {
                        part.problems.append(KeyVaultError.corruptRecord(reason: "record \(handle): \(error)", handle: handle))
                    }
                    index += chunks
                }
                collected.add(part)
            }
            // One chunk (fewer than 512 records, the usual case) is read on this thread:
            // handing it to a worker cost more than reading a one-key vault.
            if chunks == 1 {
                readChunk(0)
            } else {
                DispatchQueue.concurrentPerform(iterations: chunks, execute: readChunk)
            }
        }
        var scan = collected.scan
        scan.entries.sort { ($0.createdAt, $0.handle.rawValue) < ($1.createdAt, $1.handle.rawValue) }
        return scan
    }

    /// The entry for `handle`.
    public func entry(_ handle: KeyHandle) throws -> VaultEntry {
        try readRecord(handle).entry()
    }

    /// Signs `message` with the key `handle` (ES256: DER; Ed25519: 64 bytes). A TPM key
    /// signs in the TPM: ``KeyVaultError/Code/tpmUnavailable`` when none answers,
    /// ``KeyVaultError/Code/wrongTPM`` when it is not the TPM that made the key. Neither
    /// changes the record.
    public func sign(_ message: Data, with handle: KeyHandle) throws -> Data {
        try signingKey(handle).signature(for: message, handle: handle)
    }

    /// Whether the key `handle` can sign on this host, without signing: a software key
    /// always can; a TPM key is loaded into the TPM and flushed again. Throws the error a
    /// signature would (``KeyVaultError/Code/wrongTPM``, ``KeyVaultError/Code/tpmUnavailable``).
    public func checkUsable(_ handle: KeyHandle) throws {
        guard case .tpm(let key) = try signingKey(handle) else { return }
        do {
            try key.checkUsable()
        } catch let error as CryptoError {
            throw KeyVaultError(tpm: error, handle: handle)
        }
    }

    /// The key of `handle`: a software key from the cache while its record still exists,
    /// else from the record. A record's private key never changes, so the cache only has
    /// to notice deletion. TPM keys are not cached: each use goes to the TPM as it is now
    /// (one that stopped answering may have been replaced).
    func signingKey(_ handle: KeyHandle) throws -> DeviceSigningKey {
        if let cached = unsealed.withLock({ $0[handle] }) {
            guard try VaultFiles.status(recordPath(handle)) != nil else {
                _ = unsealed.withLock { $0.removeValue(forKey: handle) }
                throw KeyVaultError.keyNotFound(reason: "no key \(handle) in the vault", handle: handle)
            }
            return cached
        }
        let key = try readRecord(handle).deviceKey(keys: keys)
        if case .software = key { unsealed.withLock { $0[handle] = key } }
        return key
    }

    /// What `handle`'s record seals, unsealed, and how it is protected: for audits (the
    /// tests check that a TPM key's record holds a TSS2 blob and no PKCS#8). The caller
    /// wipes the bytes.
    func sealedKeyMaterial(_ handle: KeyHandle) throws -> (protection: KeyProtection, bytes: Data) {
        let record = try readRecord(handle)
        return (record.protection, try record.unsealed(keys: keys))
    }

    /// Reads, changes and writes `handle`'s metadata under the vault's write lock, so
    /// concurrent updates from any process never lose one another (how a signature counter
    /// is bumped safely). `update` runs with the lock held: keep it short.
    @discardableResult
    public func updateMetadata(_ handle: KeyHandle, _ update: (inout Data) throws -> Void) throws -> VaultEntry {
        try VaultFiles.withExclusiveLock(lockPath) {
            var record = try readRecord(handle)
            guard var metadata = try? Base64URL.decode(record.metadata) else {
                throw KeyVaultError.corruptRecord(reason: "record \(handle): undecodable metadata", handle: handle)
            }
            try update(&metadata)
            try Self.checkMetadataSize(metadata, handle: handle)
            record.metadata = Base64URL.encode(metadata)
            record.updatedAt = max(Date().timeIntervalSince1970, record.updatedAt)
            try writeRecord(record)
            return try record.entry()
        }
    }

    /// Replaces `handle`'s metadata with `metadata` if it still is `expected`, under the
    /// write lock: the compare-and-swap through which an agent's clients update metadata
    /// (their update function runs in their process, on what they read).
    /// ``KeyVaultError/Code/metadataChanged`` when another writer came first.
    @discardableResult
    public func replaceMetadata(_ handle: KeyHandle, expected: Data, with metadata: Data) throws -> VaultEntry {
        try updateMetadata(handle) { current in
            guard current == expected else {
                throw KeyVaultError.metadataChanged(reason: "key \(handle)'s metadata changed since it was read", handle: handle)
            }
            current = metadata
        }
    }

    /// Deletes the key `handle`. Throws ``KeyVaultError/Code/keyNotFound`` if there is none.
    public func deleteKey(_ handle: KeyHandle) throws {
        let removed = try VaultFiles.withExclusiveLock(lockPath) {
            try VaultFiles.remove(recordPath(handle), directory: keysDirectory)
        }
        _ = unsealed.withLock { $0.removeValue(forKey: handle) }
        guard removed else {
            throw KeyVaultError.keyNotFound(reason: "no key \(handle) in the vault", handle: handle)
        }
    }
}

/// Gathers the parts of a scan from concurrent workers.
private final class ScanCollector: Sendable {
    private let parts = Mutex(VaultScan(entries: [], problems: []))

    var scan: VaultScan { parts.withLock { $0 } }

    func add(_ part: VaultScan) {
        parts.withLock { scan in
            scan.entries += part.entries
            scan.problems += part.problems
        }
    }
}
