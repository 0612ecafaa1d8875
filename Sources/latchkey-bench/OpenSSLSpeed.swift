import Foundation
import LatchkeyCrypto

/// `openssl speed`'s own figures, from the `openssl` binary of the same OpenSSL build
/// Latchkey links (Debian's `openssl` package), run in the same benchmark.
struct OpenSSLSpeed {
    var ecdsaP256Sign: Double?
    var ecdsaP256Verify: Double?
    var ed25519Sign: Double?
    var ed25519Verify: Double?

    /// The median of several runs, figure by figure (nil where any run lacks it).
    static func median(_ runs: [OpenSSLSpeed]) -> OpenSSLSpeed {
        func pick(_ value: (OpenSSLSpeed) -> Double?) -> Double? {
            let values = runs.compactMap(value)
            return values.count == runs.count && !values.isEmpty ? latchkey_bench.median(values) : nil
        }
        return OpenSSLSpeed(
            ecdsaP256Sign: pick(\.ecdsaP256Sign), ecdsaP256Verify: pick(\.ecdsaP256Verify),
            ed25519Sign: pick(\.ed25519Sign), ed25519Verify: pick(\.ed25519Verify)
        )
    }

    /// Runs `openssl speed -seconds S ecdsap256 ed25519`; nil figures when the binary is
    /// missing or its output changed.
    static func measure(seconds: Int) -> OpenSSLSpeed {
        var speed = OpenSSLSpeed()
        guard let output = run(["openssl", "speed", "-seconds", String(seconds), "ecdsap256", "ed25519"]) else {
            print("openssl speed could not run; reference figures are missing")
            return speed
        }
        for line in output.split(separator: "\n") {
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
        return speed
    }

    /// Runs a command and returns its standard output (standard error dropped).
    private static func run(_ arguments: [String]) -> String? {
        guard let outcome = ToolProcess(arguments[0], keepsStandardError: false, maximumOutput: 1 << 20).run(Array(arguments.dropFirst())) else { return nil }
        return String(decoding: outcome.output, as: UTF8.self)
    }
}
