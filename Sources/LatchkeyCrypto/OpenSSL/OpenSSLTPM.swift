import CLatchkeyOpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// OpenSSL's `tpm2` provider (tpm2-openssl) in a library context of its own, next to the
/// default provider (docs/SECURITY.md, "Keys in the TPM"): keys generated in the TPM,
/// their TPM-wrapped blobs ("TSS2 PRIVATE KEY") written and loaded back, signatures and
/// ECDH made by the TPM through the same EVP calls as software keys. Owns the
/// `OSSL_LIB_CTX` and its providers, freed in `deinit`; the process's default context
/// never sees the provider.
///
/// Where the TPM is: the provider reads `TPM2OPENSSL_TCTI` from the environment when it
/// loads, and nothing else (tpm2-openssl 1.1.1 declares a `tcti` configuration setting but
/// hands OpenSSL the wrong pointer for it, so it is never read). Unset, the TSS's loader
/// searches, `/dev/tpmrm0` first.
///
/// A loaded key occupies one of the TPM's few transient object slots (three on many
/// TPMs and on swtpm, which has no resource manager), so keys are loaded for one
/// operation and freed (flushed) straight after, never kept.
final class OpenSSLTPMContext: @unchecked Sendable {
    let context: OpaquePointer
    private let providers: [OpaquePointer]
    /// Serialises calls into the provider: its ESYS context takes one command at a time.
    /// It guards no Swift state, only the C provider's, and is held across calls that
    /// return pointers the caller then owns.
    private let lock = Mutex<Void>(())

    /// Loads `default` and `tpm2` into a new library context; the provider connects to
    /// the TPM as it loads, so a missing, busy or unreachable TPM fails here.
    init(location: String) throws {
        guard let context = OSSL_LIB_CTX_new() else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot make a library context for the TPM")
        }
        guard let base = OSSL_PROVIDER_load(context, "default") else {
            OSSL_LIB_CTX_free(context)
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot load OpenSSL's default provider next to the TPM's")
        }
        guard let tpm2 = OSSL_PROVIDER_load(context, "tpm2") else {
            OSSL_PROVIDER_unload(base)
            OSSL_LIB_CTX_free(context)
            let installed = OpenSSLTPMContext.providerInstalled
            throw CryptoError.fromOpenSSL(
                .tpmUnavailable,
                installed
                    ? "no TPM answers at \(location) (TPM2OPENSSL_TCTI; it may be missing, busy or not accessible to this user)"
                    : "OpenSSL's tpm2 provider is not installed (Debian: apt install tpm2-openssl)"
            )
        }
        self.context = context
        providers = [tpm2, base]
    }

    deinit {
        for provider in providers { OSSL_PROVIDER_unload(provider) }
        OSSL_LIB_CTX_free(context)
    }

    /// Whether `tpm2.so` is in OpenSSL's module directory, to tell "not installed" from
    /// "no TPM" in messages.
    private static var providerInstalled: Bool {
        guard let directory = OpenSSL_version(Int32(OPENSSL_MODULES_DIR)).map({ String(cString: $0) }) else { return true }
        // The string reads `MODULESDIR: "/usr/lib/…/ossl-modules"`.
        let path = directory.split(separator: "\"").dropFirst().first.map(String.init) ?? directory
        return FileManager.default.fileExists(atPath: path + "/tpm2.so")
    }

    /// Runs `body` with the provider to itself, and sorts a failure by what the TSS said
    /// (tpm2-openssl leaves the decoded TPM response code in the error queue): `tcti:`
    /// means the transport failed, so the TPM stopped answering
    /// (``CryptoError/Code/tpmUnavailable``), as does a response cut short or a storage
    /// primary that could not be made; a key load the TPM refused for any reason but
    /// an integrity failure (the blob was made under another storage seed) means a busy
    /// or locked TPM, not another TPM's key, and is reported as unavailable too. Only
    /// the integrity failure stays ``CryptoError/Code/tpmKeyUnusable``.
    private func locked<T>(_ body: () throws -> T) throws -> T {
        try lock.withLock { _ in
            do {
                return try body()
            } catch var error as CryptoError where error.code != .tpmUnavailable {
                let said = error.openSSLErrors.map(\.message)
                if let transport = said.first(where: { $0.contains("tcti:") }) {
                    error.code = .tpmUnavailable
                    error.reason = "the TPM stopped answering (\(transport))"
                } else if let cut = said.first(where: { $0.contains("Context not large enough") || $0.contains("create primary") }) {
                    // A TPM killed while it answers leaves a truncated response, which the
                    // TSS reports as a short buffer, and the first command it breaks is
                    // often the storage primary's creation: neither says anything about
                    // the key, whose own refusal would be an integrity failure.
                    error.code = .tpmUnavailable
                    error.reason = "the TPM stopped answering mid-command (\(cut))"
                } else if error.code == .tpmKeyUnusable, let refusal = said.first(where: { $0.contains("tpm:") }), !refusal.contains("integrity") {
                    error.code = .tpmUnavailable
                    error.reason = "the TPM refused to load the key: busy, locked out or not ready (\(refusal))"
                }
                throw error
            }
        }
    }

    /// A P-256 key generated inside the TPM, and its wrapped blob (PEM "TSS2 PRIVATE
    /// KEY"), which only this TPM can load. The key is flushed from the TPM on return.
    func generateP256() throws -> (publicPoint: Data, wrappedKey: Data) {
        // Now and then (a few in a thousand, only with the machine under load, never
        // reproduced alone) tpm2-openssl 1.1.1's encoder fails on a freshly generated key
        // without saying why. Nothing of a generated key stays in the TPM, so a new key is
        // simply made again.
        var attempt = 1
        while true {
            do {
                return try generateP256Once()
            } catch let error as CryptoError where error.code == .tpmUnavailable && error.reason == Self.blobNotWritten && attempt < 3 {
                attempt += 1
            }
        }
    }

    /// The one failure ``generateP256()`` answers by making the key again.
    private static let blobNotWritten = "the TPM provider did not write its key blob"

    private func generateP256Once() throws -> (publicPoint: Data, wrappedKey: Data) {
        try locked {
            guard let keygen = EVP_PKEY_CTX_new_from_name(context, "EC", "provider=tpm2") else {
                throw CryptoError.fromOpenSSL(.tpmUnavailable, "the TPM provider cannot make EC keys")
            }
            defer { EVP_PKEY_CTX_free(keygen) }
            var generated: OpaquePointer?
            guard EVP_PKEY_keygen_init(keygen) == 1, EVP_PKEY_CTX_set_group_name(keygen, "P-256") == 1,
                  EVP_PKEY_generate(keygen, &generated) == 1, let generated
            else {
                throw CryptoError.fromOpenSSL(.tpmUnavailable, "the TPM did not generate a P-256 key")
            }
            let key = EVPKey(taking: generated)
            return (try publicPoint(key), try wrappedBlob(key))
        }
    }

    /// Loads `blob` into the TPM for the length of `body`.
    func withKey<T>(_ blob: Data, _ body: (EVPKey) throws -> T) throws -> T {
        guard blob.count <= KeyInputLimits.maximumDERSize else {
            throw CryptoError.invalidKey(reason: "a TPM key blob is at most \(KeyInputLimits.maximumDERSize) bytes")
        }
        return try locked {
            // OpenSSL 3.0's decoder drops what a decoder that failed said (openssl#14423), so
            // a load the TPM refused reads only "unsupported", whatever the reason: another
            // TPM's key, and now and then (under load, one in some thousands, never
            // reproduced alone) a key this TPM loads on the next try. The second try costs
            // a foreign key one more refused load; a passing hiccup no longer fails a
            // signature. Only the load is tried again; `body` runs once.
            let key: EVPKey
            do {
                key = try load(blob)
            } catch let error as CryptoError where error.code == .tpmKeyUnusable && error.reason == Self.keyNotLoaded {
                key = try load(blob)
            }
            return try body(key)
        }
    }

    /// What ``withKey(_:_:)`` reports when the TPM provider cannot load a blob.
    private static let keyNotLoaded = "this TPM cannot load the key: it was made by another TPM, or before this TPM was cleared"

    /// One attempt at loading `blob` (the caller holds the lock).
    private func load(_ blob: Data) throws -> EVPKey {
        var loaded: OpaquePointer?
        guard let decoder = OSSL_DECODER_CTX_new_for_pkey(&loaded, "PEM", nil, "EC", Int32(OSSL_KEYMGMT_SELECT_ALL), context, "provider=tpm2") else {
            throw CryptoError.fromOpenSSL(.tpmUnavailable, "the TPM provider cannot read key blobs")
        }
        defer { OSSL_DECODER_CTX_free(decoder) }
        let decoded = blob.withUnsafeBytes { buffer -> Int32 in
            var pointer = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self)
            var length = buffer.count
            return OSSL_DECODER_from_data(decoder, &pointer, &length)
        }
        guard decoded == 1, let loaded else {
            throw CryptoError.fromOpenSSL(.tpmKeyUnusable, Self.keyNotLoaded)
        }
        return EVPKey(taking: loaded)
    }

    /// An ES256 signature (DER `ECDSA-Sig-Value`) made by the TPM with a loaded key.
    func signES256(_ key: EVPKey, _ message: Data) throws -> Data {
        guard let signing = EVP_MD_CTX_new() else { throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a signature context") }
        defer { EVP_MD_CTX_free(signing) }
        guard EVP_DigestSignInit_ex(signing, nil, "SHA256", context, "provider=tpm2", key.pointer, nil) == 1 else {
            throw CryptoError.fromOpenSSL(.tpmKeyUnusable, "the TPM cannot sign with this key")
        }
        // The signature's size is known (at most 72 bytes DER for P-256), so one call.
        var signature = [UInt8](repeating: 0, count: 80)
        var length = signature.count
        let signed = message.withUnsafeBytes { buffer in
            EVP_DigestSign(signing, &signature, &length, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count) == 1
        }
        guard signed, length <= signature.count else {
            throw CryptoError.fromOpenSSL(.tpmUnavailable, "the TPM did not sign")
        }
        return Data(signature.prefix(length))
    }

    /// The ECDH shared secret (the x-coordinate, SEC 1 §3.3.1) of a loaded key with `peer`,
    /// computed by the TPM (TPM2_ECDH_ZGen).
    func sharedSecret(_ key: EVPKey, peer: VerifyingKey) throws -> Data {
        try OpenSSLKeys.sharedSecret(key, peer: peer.key, libraryContext: context, properties: "provider=tpm2")
    }

    /// The public point (65 bytes, uncompressed) of a TPM key (read from its public area,
    /// no TPM command).
    func publicPoint(_ key: EVPKey) throws -> Data {
        var point = [UInt8](repeating: 0, count: 133)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(key.pointer, "pub", &point, point.count, &length) == 1, length == 65, point[0] == 4 else {
            throw CryptoError.fromOpenSSL(.tpmUnavailable, "the TPM key has no readable P-256 public point")
        }
        return Data(point.prefix(length))
    }

    /// A key's wrapped blob, PEM.
    private func wrappedBlob(_ key: EVPKey) throws -> Data {
        guard let encoder = OSSL_ENCODER_CTX_new_for_pkey(key.pointer, Int32(OSSL_KEYMGMT_SELECT_ALL), "PEM", nil, "provider=tpm2") else {
            throw CryptoError.fromOpenSSL(.tpmUnavailable, "the TPM provider cannot write its key blob")
        }
        defer { OSSL_ENCODER_CTX_free(encoder) }
        var bytes: UnsafeMutablePointer<UInt8>?
        var length = 0
        guard OSSL_ENCODER_to_data(encoder, &bytes, &length) == 1, let bytes else {
            throw CryptoError.fromOpenSSL(.tpmUnavailable, Self.blobNotWritten)
        }
        defer { CLatchkey_OPENSSL_free(bytes) }
        let blob = Data(bytes: bytes, count: length)
        guard blob.starts(with: Data("-----BEGIN TSS2 PRIVATE KEY-----".utf8)) else {
            throw CryptoError.tpmUnavailable(reason: "the TPM provider wrote something other than a TSS2 key blob")
        }
        return blob
    }
}

extension OpenSSLKeys {
    /// The ECDH shared secret of `key` with `peer` (P-256: 32 bytes), in `libraryContext`
    /// (nil: the default one) with `properties` choosing the implementation.
    static func sharedSecret(_ key: EVPKey, peer: EVPKey, libraryContext: OpaquePointer? = nil, properties: String? = nil) throws -> Data {
        guard let derivation = EVP_PKEY_CTX_new_from_pkey(libraryContext, key.pointer, properties) else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a key agreement context")
        }
        defer { EVP_PKEY_CTX_free(derivation) }
        var length = 0
        guard EVP_PKEY_derive_init(derivation) == 1, EVP_PKEY_derive_set_peer(derivation, peer.pointer) == 1,
              EVP_PKEY_derive(derivation, nil, &length) == 1, (1...133).contains(length)
        else {
            throw CryptoError.fromOpenSSL(.invalidKey, "ECDH with this peer key failed")
        }
        var secret = Data(count: length)
        let derived = secret.withUnsafeMutableBytes { buffer in
            EVP_PKEY_derive(derivation, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), &length) == 1
        }
        guard derived, length == secret.count else {
            secureZero(&secret)
            throw CryptoError.fromOpenSSL(.invalidKey, "ECDH with this peer key failed")
        }
        return secret
    }
}
