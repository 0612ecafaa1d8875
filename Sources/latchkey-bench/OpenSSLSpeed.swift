import Foundation

/// `openssl speed`'s own figures, from the `openssl` binary of the same OpenSSL build
/// Latchkey links (Debian's `openssl` package), run in the same benchmark.
struct OpenSSLSpeed {
    var ecdsaP256Sign: Double?
    var ecdsaP256Verify: Double?
    var ed25519Sign: Double?
    var ed25519Verify: Double?

    /// Runs `openssl speed -seconds S ecdsap256 ed25519`; nil figures when the binary is
    /// missing or its output changed.
    static func measure(seconds: Int) -> OpenSSLSpeed {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "speed", "-seconds", String(seconds), "ecdsap256", "ed25519"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        var speed = OpenSSLSpeed()
        do {
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                // e.g. " 256 bits ecdsa (nistp256)   0.0000s   0.0001s  35094.9  11790.0"
                let numbers = line.split(separator: " ").compactMap { Double($0) }
                guard numbers.count >= 3 else { continue }
                let (sign, verify) = (numbers[numbers.count - 2], numbers[numbers.count - 1])
                if line.contains("ecdsa (nistp256)") {
                    speed.ecdsaP256Sign = sign
                    speed.ecdsaP256Verify = verify
                } else if line.contains("EdDSA (Ed25519)") {
                    speed.ed25519Sign = sign
                    speed.ed25519Verify = verify
                }
            }
        } catch {
            Swift.print("openssl speed could not run: \(error)")
        }
        return speed
    }
}
