import CLatchkeyOpenSSL

/// OpenSSL's CSPRNG (`RAND_bytes`: the default DRBG, seeded from the kernel) and its
/// constant-time comparison.
enum OpenSSLRandom {
    static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
        var remaining = buffer[...]
        while !remaining.isEmpty {
            let chunk = min(remaining.count, Int(Int32.max))
            let slice = UnsafeMutableRawBufferPointer(rebasing: remaining.prefix(chunk))
            guard RAND_bytes(slice.bindMemory(to: UInt8.self).baseAddress, Int32(chunk)) == 1 else {
                secureZero(buffer)
                throw CryptoError.fromOpenSSL(.randomnessFailure, "the random generator failed")
            }
            remaining = remaining.dropFirst(chunk)
        }
    }

    /// `CRYPTO_memcmp`: time depends on the length only, never on the contents.
    static func constantTimeEqual(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0
    }
}
