import CLatchkeyOpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Synchronization

/// Owner of secret bytes (symmetric keys, derived keys). The bytes live in memory this
/// class allocates itself, never in a copy-on-write `Data`, so the one copy is wiped with
/// `OPENSSL_cleanse` (which the compiler cannot optimise away) when the owner goes.
final class SecureBytes: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    /// Whether the pages of the memory is locked (mlock(2)): set for secrets made after
    /// ``SecureMemory/lockSecrets()``.
    private let pinned: Bool

    /// Whether new secrets go in pages of their own, locked in memory (``SecureMemory``).
    static let locksPages = Atomic<Bool>(false)
    static let pageSize = max(4096, sysconf(Int32(_SC_PAGESIZE)))

    /// Zeroed memory for `count` bytes: in pages of its own, locked when it can be, once
    /// ``SecureMemory/lockSecrets()`` asked for it (each owner has whole pages, so one
    /// owner's munlock never unlocks another's secret).
    private static func allocate(_ count: Int) -> (UnsafeMutableRawBufferPointer, pinned: Bool) {
        guard locksPages.load(ordering: .relaxed) else {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            return (buffer, false)
        }
        let size = (max(count, 1) + pageSize - 1) / pageSize * pageSize
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: pageSize)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        return (buffer, mlock(buffer.baseAddress, size) == 0)
    }

    /// Copies `bytes` into owned storage.
    init(copying bytes: some DataProtocol) {
        (storage, pinned) = Self.allocate(bytes.count)
        storage.copyBytes(from: bytes)
        count = bytes.count
    }

    /// Allocates `count` bytes and lets `fill` write them; wiped and freed if it throws.
    init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        let (buffer, pinned) = Self.allocate(count)
        do {
            try fill(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
        } catch {
            OPENSSL_cleanse(buffer.baseAddress, buffer.count)
            if pinned { munlock(buffer.baseAddress, buffer.count) }
            buffer.deallocate()
            throw error
        }
        storage = buffer
        self.pinned = pinned
        self.count = count
    }

    let count: Int

    /// Whether this owner's pages are locked in memory.
    var isPinned: Bool { pinned }

    deinit {
        OPENSSL_cleanse(storage.baseAddress, storage.count)
        if pinned { munlock(storage.baseAddress, storage.count) }
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
