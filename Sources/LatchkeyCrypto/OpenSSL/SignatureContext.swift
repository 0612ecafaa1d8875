import CLatchkeyOpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// A signing or verification context prepared once for one key and reused.
///
/// `EVP_DigestSignInit` costs about 25,000 instructions (~5 µs), a sixth of an ES256
/// signature, so it must not run per operation. Two shapes, by algorithm:
///
/// - Hash-then-sign (ES256, RS256): the message is hashed with the once-fetched SHA-256
///   and the digest signed with `EVP_PKEY_sign`/`EVP_PKEY_verify` on an `EVP_PKEY_CTX`
///   initialised once. A context is not safe for two threads at once, so idle contexts
///   wait in a small pool: an operation takes one (or duplicates the template with
///   `EVP_PKEY_CTX_dup` when none is idle) and puts it back. Each pooled entry also keeps
///   its own SHA-256 `EVP_MD_CTX`, re-initialised per message rather than allocated (a
///   one-shot `EVP_Digest` allocates a context every time, ~5% of a signature). This is
///   exactly the loop `openssl speed` times, plus the hash.
/// - PureEdDSA (Ed25519), which hashes internally: a prepared `EVP_MD_CTX` copied with
///   `EVP_MD_CTX_copy_ex` for each operation (the source of a copy is only read, so this
///   is safe from many threads). Copies carry `EVP_MD_CTX_FLAG_FINALISE`, which spares
///   OpenSSL a second duplication inside the one-shot call.
final class SignatureContext: @unchecked Sendable {
    enum Purpose {
        case sign
        case verify
    }

    private enum Backing {
        case prehash(template: OpaquePointer, digest: DigestAlgorithm)
        case pure(prepared: OpaquePointer)
    }

    /// Idle contexts kept per key at most; more are freed. Two cores, a few tasks each.
    private static let poolLimit = 8

    private let purpose: Purpose
    private let backing: Backing
    /// Kept alive for as long as the prepared contexts refer to it.
    let key: EVPKey
    private let maximumSignatureSize: Int
    private let idle = Mutex<[PooledPrehash]>([])

    /// - Parameter digest: the hash for hash-then-sign algorithms, or nil for Ed25519.
    init(_ purpose: Purpose, key: EVPKey, digest: DigestAlgorithm?) throws {
        self.purpose = purpose
        self.key = key
        self.maximumSignatureSize = Int(EVP_PKEY_get_size(key.pointer))
        if let digest {
            guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a signature context")
            }
            let initialised = purpose == .sign ? EVP_PKEY_sign_init(context) : EVP_PKEY_verify_init(context)
            guard initialised == 1,
                  let md = try? digest.fetched.get(),
                  EVP_PKEY_CTX_set_signature_md(context, md) == 1
            else {
                EVP_PKEY_CTX_free(context)
                throw CryptoError.fromOpenSSL(.invalidKey, "the key cannot be used for this signature algorithm")
            }
            backing = .prehash(template: context, digest: digest)
        } else {
            guard let context = EVP_MD_CTX_new() else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a signature context")
            }
            let status = purpose == .sign
                ? EVP_DigestSignInit_ex(context, nil, nil, nil, nil, key.pointer, nil)
                : EVP_DigestVerifyInit_ex(context, nil, nil, nil, nil, key.pointer, nil)
            guard status == 1 else {
                EVP_MD_CTX_free(context)
                throw CryptoError.fromOpenSSL(.invalidKey, "the key cannot be used for this signature algorithm")
            }
            backing = .pure(prepared: context)
        }
    }

    deinit {
        switch backing {
        case .prehash(let template, _):
            EVP_PKEY_CTX_free(template)
            idle.withLock { $0.removeAll() }
        case .pure(let prepared):
            EVP_MD_CTX_free(prepared)
        }
    }

    func sign(_ message: some DataProtocol) throws -> Data {
        switch backing {
        case .prehash(let template, let digest):
            try withPooledContext(template, digest) { entry in
                try entry.withDigest(of: message) { hash in
                    try collectSignature { output, length in
                        EVP_PKEY_sign(entry.pkeyContext, output, &length, hash.baseAddress, hash.count) == 1
                    }
                }
            }
        case .pure(let prepared):
            try withCopy(of: prepared) { context in
                try message.withContiguousBytes { input in
                    try collectSignature { output, length in
                        EVP_DigestSign(context, output, &length, input.bindMemory(to: UInt8.self).baseAddress, input.count) == 1
                    }
                }
            }
        }
    }

    /// Runs a signing call into a stack buffer and copies the signature out once (a
    /// zeroed `Data` trimmed afterwards cost an allocation and a replace per signature).
    private func collectSignature(_ produce: (UnsafeMutablePointer<UInt8>?, inout Int) -> Bool) throws -> Data {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumSignatureSize) { output in
            var length = output.count
            guard produce(output.baseAddress, &length), length <= output.count else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "signing failed")
            }
            return Data(UnsafeBufferPointer(rebasing: output[0..<length]))
        }
    }

    /// True only for a signature OpenSSL verifies; any error means false, and the error
    /// queue is left empty.
    func verify(_ signature: some DataProtocol, for message: some DataProtocol) -> Bool {
        let valid: Bool
        switch backing {
        case .prehash(let template, let digest):
            valid = (try? withPooledContext(template, digest) { entry in
                try entry.withDigest(of: message) { hash in
                    signature.withContiguousBytes { signatureBytes in
                        EVP_PKEY_verify(entry.pkeyContext, signatureBytes.bindMemory(to: UInt8.self).baseAddress, signatureBytes.count,
                                        hash.baseAddress, hash.count) == 1
                    }
                }
            }) ?? false
        case .pure(let prepared):
            valid = (try? withCopy(of: prepared) { context in
                signature.withContiguousBytes { signatureBytes in
                    message.withContiguousBytes { input in
                        EVP_DigestVerify(context, signatureBytes.bindMemory(to: UInt8.self).baseAddress, signatureBytes.count,
                                         input.bindMemory(to: UInt8.self).baseAddress, input.count) == 1
                    }
                }
            }) ?? false
        }
        if !valid { OpenSSLErrorQueue.clear() }
        return valid
    }

    /// Runs `body` with an idle entry from the pool, or a new one made from the template,
    /// and returns it to the pool afterwards.
    private func withPooledContext<R>(_ template: OpaquePointer, _ digest: DigestAlgorithm, _ body: (PooledPrehash) throws -> R) throws -> R {
        let pooled = idle.withLock { $0.popLast() }
        let entry = try pooled ?? PooledPrehash(template: template, digest: digest)
        defer {
            idle.withLock { idle in
                if idle.count < Self.poolLimit { idle.append(entry) }
            }
        }
        return try body(entry)
    }

    /// Runs `body` with a single-use copy of the prepared digest-signing context.
    private func withCopy<R>(of prepared: OpaquePointer, _ body: (OpaquePointer) throws -> R) throws -> R {
        guard let copy = EVP_MD_CTX_new() else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a signature context")
        }
        defer { EVP_MD_CTX_free(copy) }
        guard EVP_MD_CTX_copy_ex(copy, prepared) == 1 else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot copy a signature context")
        }
        EVP_MD_CTX_set_flags(copy, Int32(EVP_MD_CTX_FLAG_FINALISE))
        return try body(copy)
    }
}

/// A public key's OpenSSL side, made on first use and kept: the parsed `EVP_PKEY` (for
/// keys that arrive as SPKI bytes, such as a vault listing's) and the prepared
/// verification context. Most public keys in a process (a listing, a JWKS) are never
/// used to verify, so they should not pay for an import or a context up front.
final class LazyPublicKey: Sendable {
    private struct State: @unchecked Sendable {
        var parsed: EVPKey?
        var context: SignatureContext?
    }

    private let spki: Data
    // `Mutex` lives inline: a listing makes one of these per entry, and an `NSLock` per
    // entry would be a heap object and a pthread mutex each.
    private let state: Mutex<State>

    init(parsed: EVPKey?, spki: Data) {
        self.spki = spki
        state = Mutex(State(parsed: parsed))
    }

    func key() throws -> EVPKey {
        try state.withLock { state in try Self.key(&state, spki: spki) }
    }

    func verificationContext(digest: DigestAlgorithm?) throws -> SignatureContext {
        try state.withLock { state in
            if let context = state.context { return context }
            let made = try SignatureContext(.verify, key: Self.key(&state, spki: spki), digest: digest)
            state.context = made
            return made
        }
    }

    private static func key(_ state: inout State, spki: Data) throws -> EVPKey {
        if let parsed = state.parsed { return parsed }
        let key = try OpenSSLKeys.parsePublicKey(spkiDER: spki).0
        state.parsed = key
        return key
    }
}

/// One pooled pair for hash-then-sign: a duplicate of the prepared `EVP_PKEY_CTX` and a
/// digest context reused for every message. Used by one thread at a time (the pool hands
/// it out exclusively).
private final class PooledPrehash: @unchecked Sendable {
    let pkeyContext: OpaquePointer
    private let digestContext: OpaquePointer
    private let digest: OpaquePointer
    private let digestSize: Int

    init(template: OpaquePointer, digest algorithm: DigestAlgorithm) throws {
        let digest = try algorithm.fetched.get()
        guard let pkeyContext = EVP_PKEY_CTX_dup(template) else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot duplicate a signature context")
        }
        guard let digestContext = EVP_MD_CTX_new() else {
            EVP_PKEY_CTX_free(pkeyContext)
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a digest context")
        }
        self.pkeyContext = pkeyContext
        self.digestContext = digestContext
        self.digest = digest
        self.digestSize = algorithm.byteCount
    }

    deinit {
        EVP_PKEY_CTX_free(pkeyContext)
        EVP_MD_CTX_free(digestContext)
    }

    /// Hashes `message` into a stack buffer and calls `body` with the digest. (It was an
    /// array, a heap allocation per signature: a visible share of an ES256 signature.)
    func withDigest<R>(of message: some DataProtocol, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) throws -> R {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(EVP_MAX_MD_SIZE)) { output in
            var length: UInt32 = 0
            let ok = message.withContiguousBytes { input in
                EVP_DigestInit_ex2(digestContext, digest, nil) == 1
                    && EVP_DigestUpdate(digestContext, input.baseAddress, input.count) == 1
                    && EVP_DigestFinal_ex(digestContext, output.baseAddress, &length) == 1
            }
            guard ok, Int(length) == digestSize else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "digest failed")
            }
            return try body(UnsafeBufferPointer(rebasing: output[0..<digestSize]))
        }
    }
}
