import Foundation
import LatchkeyCrypto

/// Where `latchkey serve` and `latchkey admin` take the admin token from, and how strong a
/// supplied one must be (docs/SECURITY.md, "The reference provider"). Never from the
/// command line: argv is readable by every local user in `/proc/<pid>/cmdline`.
enum AdminToken {
    /// The systemd credential (`LoadCredential=latchkey-admin-token:<file>`).
    static let credentialName = "latchkey-admin-token"
    /// The least estimated strength of a supplied token.
    static let minimumBits = 128.0

    /// `--admin-token-file`, else `$LATCHKEY_ADMIN_TOKEN`, else the systemd credential;
    /// nil when none is given. A trailing newline in a file is not part of the token.
    static func supplied(file: String?) throws -> String? {
        if let file { return text(try SecretFile.read(file)) }
        if let token = ProcessInfo.processInfo.environment["LATCHKEY_ADMIN_TOKEN"], !token.isEmpty { return token }
        if let data = try SecretFile.credential(credentialName) { return text(data) }
        return nil
    }

    private static func text(_ data: Data) -> String {
        var token = String(decoding: data, as: UTF8.self)
        while token.hasSuffix("\n") || token.hasSuffix("\r") { token.removeLast() }
        return token
    }

    /// A new token: 32 random bytes, base64url (256 bits).
    static func generate() throws -> String {
        Base64URL.encode(try SecureRandom.bytes(count: 32))
    }

    /// Refuses a token estimated below ``minimumBits``: its length times the bits per
    /// character of the smallest usual alphabet that holds all of it (digits 3.3, hex 4,
    /// one-case letters and digits 5.2, base64url 6, printable ASCII 6.6). A 4-digit or a
    /// dictionary-word token is refused; 22 base64url or 32 hex characters pass.
    static func checkStrength(_ token: String) throws {
        let bits = estimatedBits(token)
        guard bits >= minimumBits else {
            throw CommandFailure(
                "the admin token is too weak (about \(Int(bits)) bits; at least \(Int(minimumBits)) are needed, e.g. 22 base64url or 32 hex characters: head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
            )
        }
    }

    static func estimatedBits(_ token: String) -> Double {
        let scalars = token.unicodeScalars
        func all(_ set: String) -> Bool { scalars.allSatisfy { set.unicodeScalars.contains($0) } }
        let digits = "0123456789"
        let lower = "abcdefghijklmnopqrstuvwxyz"
        let upper = lower.uppercased()
        let perCharacter: Double = if all(digits) {
            log2(10)
        } else if all(digits + "abcdef") || all(digits + "ABCDEF") {
            4
        } else if all(digits + lower) || all(digits + upper) {
            log2(36)
        } else if all(digits + lower + upper + "-_") {
            6
        } else {
            log2(95)
        }
        return Double(scalars.count) * perCharacter
    }
}
