import CLatchkeyOpenSSL
import Foundation

/// A prepared `EVP_MD_CTX` for signing or verifying with one key.
///
/// `EVP_DigestSignInit` costs about 25,000 instructions (~5 µs), a sixth of an ES256
/// signature. It runs once here; each operation copies the prepared context with
/// `EVP_MD_CTX_copy_ex` and uses the copy once, which puts a signature within a few
/// percent of `openssl speed`'s loop (DESIGN.md, performance notes). The prepared
/// context is only ever read (the copy's source is `const`), so one instance is safe to
/// use from many threads at once. Copies carry `EVP_MD_CTX_FLAG_FINALISE`, which tells
/// OpenSSL it need not duplicate the context again inside `EVP_DigestSignFinal`.
final class SignatureContext: @unchecked Sendable {
    enum Purpose {
        case sign
        case verify
    }

    private let prepared: OpaquePointer
    /// Kept alive for as long as the prepared context refers to it.
    let key: EVPKey
    private let maximumSignatureSize: Int

    /// - Parameter digest: the digest name, or nil for algorithms that hash internally
    ///   (Ed25519, RFC 8032 "PureEdDSA").
    init(_ purpose: Purpose, key: EVPKey, digest: String?) throws {
        guard let context = EVP_MD_CTX_new() else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a signature context")
        }
        let status: Int32
        switch purpose {
        case .sign:
            status = EVP_DigestSignInit_ex(context, nil, digest, nil, nil, key.pointer, nil)
        case .verify:
            status = EVP_DigestVerifyInit_ex(context, nil, digest, nil, nil, key.pointer, nil)
        }
        guard status == 1 else {
            EVP_MD_CTX_free(context)
            throw CryptoError.fromOpenSSL(.invalidKey, "the key cannot be used for this signature algorithm")
        }
        self.prepared = context
        self.key = key
        self.maximumSignatureSize = Int(EVP_PKEY_get_size(key.pointer))
    }

    deinit { EVP_MD_CTX_free(prepared) }

    /// A fresh single-use copy of the prepared context.
    private func withCopy<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
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

    func sign(_ message: some DataProtocol) throws -> Data {
        var signature = Data(count: maximumSignatureSize)
        let length = try withCopy { context in
            try message.withContiguousBytes { messageBytes in
                try signature.withUnsafeMutableBytes { output in
                    var length = output.count
                    guard EVP_DigestSign(
                        context,
                        output.bindMemory(to: UInt8.self).baseAddress, &length,
                        messageBytes.bindMemory(to: UInt8.self).baseAddress, messageBytes.count
                    ) == 1 else {
                        throw CryptoError.fromOpenSSL(.openSSLFailure, "signing failed")
                    }
                    return length
                }
            }
        }
        signature.removeSubrange(length...)
        return signature
    }

    /// True only for a signature OpenSSL verifies; any error means false, and the error
    /// queue is left empty.
    func verify(_ signature: some DataProtocol, for message: some DataProtocol) -> Bool {
        let valid = (try? withCopy { context in
            signature.withContiguousBytes { signatureBytes in
                message.withContiguousBytes { messageBytes in
                    EVP_DigestVerify(
                        context,
                        signatureBytes.bindMemory(to: UInt8.self).baseAddress, signatureBytes.count,
                        messageBytes.bindMemory(to: UInt8.self).baseAddress, messageBytes.count
                    ) == 1
                }
            }
        }) ?? false
        if !valid { OpenSSLErrorQueue.clear() }
        return valid
    }
}

/// A verification context made on first use and kept: most public keys in a process
/// (a vault listing, a JWKS) are never used to verify, so they should not pay for a
/// prepared context up front.
final class LazyVerificationContext: @unchecked Sendable {
    private let lock = NSLock()
    private var context: SignatureContext?

    func get(key: EVPKey, digest: String?) throws -> SignatureContext {
        lock.lock()
        defer { lock.unlock() }
        if let context { return context }
        let made = try SignatureContext(.verify, key: key, digest: digest)
        context = made
        return made
    }
}
