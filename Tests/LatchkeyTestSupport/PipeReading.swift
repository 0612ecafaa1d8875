public import Foundation
import Glibc

/// Reads of a child's output pipe that survive signals. Foundation's `availableData` and
/// `readDataToEndOfFile()` end the process (`try!`) when `read(2)` is interrupted
/// (EINTR), which happens when the test process handles a signal meanwhile (Foundation's
/// `Process` installs a SIGCHLD handler): one run crashed that way in the Authlib test's
/// start. These retry instead.
public enum PipeReading {
    /// The next bytes available on `handle` (waiting for some); empty at end of file or
    /// on an error other than EINTR.
    public static func chunk(_ handle: FileHandle, maximum: Int = 64 * 1024) -> Data {
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count > 0 { return Data(buffer.prefix(count)) }
            if count < 0, errno == EINTR { continue }
            return Data()
        }
    }

    /// Everything until end of file.
    public static func all(_ handle: FileHandle) -> Data {
        var data = Data()
        while true {
            let chunk = chunk(handle)
            if chunk.isEmpty { return data }
            data.append(chunk)
        }
    }

    /// Reads and drops everything until end of file, on a thread of its own, so a chatty
    /// child never blocks on a full pipe.
    public static func drainInBackground(_ handle: FileHandle) {
        Thread { while !chunk(handle).isEmpty {} }.start()
    }
}
