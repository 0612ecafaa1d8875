import Foundation

/// A private directory of its own under `root` for one benchmark group's files.
func makeScratchDirectory(under root: String) throws -> String {
    let path = URL(fileURLWithPath: root).appendingPathComponent("latchkey-bench-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    return path
}
