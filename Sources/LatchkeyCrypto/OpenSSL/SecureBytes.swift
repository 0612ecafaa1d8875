import CLatchkeyOpenSSL
import Foundation

/// Owner of secret bytes (symmetric keys, derived keys). The bytes live in memory this
/// class allocates itself, never in a copy-on-write `Data`, so the one copy is wiped with
/// `OPENSSL_cleanse` (which the compiler cannot optimise away) when the owner goes.
final class SecureBytes: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    /// Copies `bytes` into owned storage.
    init(copying bytes: some DataProtocol) {
        storage = .allocate(byteCount: max(bytes.count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        storage.copyBytes(from: bytes)
        count = bytes.count
    }

    /// Allocates `count` bytes and lets `fill` write them; wiped and freed if it throws.
    init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        do {
            try fill(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
        } catch {
            OPENSSL_cleanse(buffer.baseAddress, buffer.count)
            buffer.deallocate()
            throw error
        }
        storage = buffer
        self.count = count
    }

    let count: Int

    deinit {
        OPENSSL_cleanse(storage.baseAddress, storage.count)
        storage.deallocate()
    }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }
}

/// Wipes a buffer that held a secret.
func secureZero(_ buffer: UnsafeMutableRawBufferPointer) {
    OPENSSL_cleanse(buffer.baseAddress, buffer.count)
}

/// Wipes the bytes of a `Data` that held a secret. Best effort: copies that `Data` made
/// before (on mutation) are out of reach, which is why secrets are kept in
/// ``SecureBytes`` wherever the API allows.
func secureZero(_ data: inout Data) {
    data.withUnsafeMutableBytes { secureZero($0) }
}
