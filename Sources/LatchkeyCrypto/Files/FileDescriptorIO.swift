#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
import Glibc

/// Bounded reads and whole writes on a file descriptor: standard input and output, a file
/// opened without following links.
///
/// Foundation's `FileHandle` did this before; it lives in swift-corelibs-foundation, which
/// brings ICU's data into every binary that links it (docs/PERFORMANCE.md, "The Debian
/// package"). Unlike `FileHandle.write`, a failed write is reported, not a crash.
package enum FileDescriptorIO {
    /// Up to `limit` bytes from `descriptor`, read until its end or until the limit is
    /// reached; a caller that must refuse more than a size asks for one byte past it.
    /// `nil` when a read fails (the descriptor is not readable, an I/O error).
    package static func read(_ descriptor: Int32, upTo limit: Int) -> Data? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: min(max(limit, 1), 64 * 1024))
        while data.count < limit {
            let wanted = min(buffer.count, limit - data.count)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, wanted) }
            if count < 0, errno == EINTR { continue }
            if count < 0 { return nil }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    /// Up to `limit` bytes of the file at `path`, opened read-only without following a
    /// symbolic link when `followingLinks` is false; `nil` when it cannot be opened or read.
    package static func read(path: String, upTo limit: Int, followingLinks: Bool = true) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        return read(descriptor, upTo: limit)
    }

    /// Writes all of `bytes`, again after a short write or an interruption.
    /// - Returns: `false` when a write fails (`EPIPE` once the reader has gone, `ENOSPC`).
    @discardableResult
    package static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Writes all of `data` (see ``write(_:_:)-(_,UnsafeRawBufferPointer)``).
    @discardableResult
    package static func write(_ descriptor: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { write(descriptor, $0) }
    }

    /// Writes all of `text` as UTF-8, without copying it when it is stored as UTF-8.
    @discardableResult
    package static func write(_ descriptor: Int32, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { write(descriptor, UnsafeRawBufferPointer($0)) }
    }
}
