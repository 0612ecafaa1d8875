import Foundation
import LatchkeyCrypto

/// A private directory of its own under `root` for one benchmark group's files.
func makeScratchDirectory(under root: String) throws -> String {
    let path = URL(fileURLWithPath: root).appendingPathComponent("latchkey-bench-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return path
}

/// A vault key file (32 random bytes, 0600) in `directory`, made 0700 with the file the
/// first time: the benchmark's vaults open with no scrypt.
func vaultKeyFile(in directory: URL) throws -> URL {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    let keyFile = directory.appendingPathComponent("key")
    if !FileManager.default.fileExists(atPath: keyFile.path) {
        guard FileManager.default.createFile(atPath: keyFile.path, contents: try SecureRandom.bytes(count: 32), attributes: [.posixPermissions: 0o600]) else {
            throw BenchmarkError("cannot write a key file")
        }
    }
    return keyFile
}

/// 32 random bytes: a store key for the `latchkey serve` processes that share a database.
func randomKey() throws -> Data {
    guard let random = FileHandle(forReadingAtPath: "/dev/urandom") else { throw BenchmarkError("no /dev/urandom") }
    return random.readData(ofLength: 32)
}
