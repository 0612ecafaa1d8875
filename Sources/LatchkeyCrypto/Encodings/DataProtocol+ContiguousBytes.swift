#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DataProtocol {
    /// Calls `body` with the bytes in one contiguous buffer, copying only when the
    /// collection is not contiguous already (a `Data` or `[UInt8]` never is copied).
    ///
    /// The buffer's base address is never nil, even for an empty collection: C APIs
    /// such as OpenSSL's `OSSL_PARAM` treat a null pointer as "absent", not "empty".
    func withContiguousBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if isEmpty {
            return try withUnsafeBytes(of: UInt8(0)) { sentinel in
                try body(UnsafeRawBufferPointer(rebasing: sentinel[0..<0]))
            }
        }
        if let result = try withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return try Array(self).withUnsafeBytes(body)
    }
}
