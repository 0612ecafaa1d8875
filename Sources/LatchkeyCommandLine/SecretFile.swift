#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
import Glibc
import LatchkeyCrypto
// `stat`'s members: in this target the C header is first seen through CDispatch, the
// clang module under Dispatch, which MemberImportVisibility then asks to be imported.
import CDispatch

/// Secrets `latchkey serve` reads from files (docs/SECURITY.md, "The provider's store"):
/// the store key and the database and SMTP passwords, from a path given on the command line or a
/// systemd credential (`LoadCredential=`), never the secret itself on the command line.
/// A file that group or others can read is refused, as ssh refuses such a key.
package enum SecretFile {
    /// The file's bytes (at most 4 KiB, or exactly `count` when given).
    package static func read(_ path: String, exactly count: Int? = nil) throws -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CommandFailure("cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw CommandFailure("cannot read \(path)") }
        guard status.st_mode & 0o077 == 0 else {
            throw CommandFailure("\(path) can be read by others (mode \(String(status.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        var bytes = [UInt8](repeating: 0, count: 4097)
        defer { for index in bytes.indices { bytes[index] = 0 } }
        let read = Glibc.read(descriptor, &bytes, bytes.count)
        guard read >= 0, read <= 4096 else { throw CommandFailure("\(path) is over 4 KiB") }
        if let count, read != count {
            throw CommandFailure("\(path) must hold exactly \(count) bytes (head -c \(count) /dev/urandom > \(path))")
        }
        return Data(bytes.prefix(read))
    }

    /// The systemd credential `name` (`$CREDENTIALS_DIRECTORY/name`), when there is one.
    package static func credential(_ name: String, exactly count: Int? = nil) throws -> Data? {
        guard let directory = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else { return nil }
        let path = directory + "/" + name
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try read(path, exactly: count)
    }

    /// A password, one line: from `file` when given, else the credential `credential`,
    /// else the environment variable `environment` (when named); nil when none has one.
    package static func password(file: String?, credential: String, environment: String? = nil) throws -> String? {
        let bytes = try file.map { try read($0) } ?? Self.credential(credential)
        if let bytes { return String(decoding: bytes, as: UTF8.self).trimmingLineBreaks() }
        return environment.flatMap { ProcessInfo.processInfo.environment[$0] }
    }
}
