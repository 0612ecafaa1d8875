#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// Where `latchkey serve` and `latchkey admin` take the admin token from, how strong a
/// supplied one must be, and what `serve` says of it (docs/SECURITY.md, "The reference
/// provider"). Never from the command line: argv is readable by every local user in
/// `/proc/<pid>/cmdline`; and never printed unless `serve` made it and stdout is a
/// terminal: the shipped unit sends stdout to the journal, which others may read.
package enum AdminToken {
    /// The systemd credential (`LoadCredential=latchkey-admin-token:<file>`).
    package static let credentialName = "latchkey-admin-token"
    /// The least estimated strength of a supplied token (``SecretStrength``).
    package static let minimumBits = 128.0

    /// Where the token `serve` uses came from.
    package enum Origin: Sendable, Equatable {
        /// `--admin-token-file PATH`.
        case file(String)
        /// `$LATCHKEY_ADMIN_TOKEN`.
        case environment
        /// The systemd credential ``credentialName``.
        case credential
        /// Made by `serve` and kept in a 0600 file: the data directory's `admin-token`
        /// (read back on restart) or, without a data directory, a private temporary
        /// directory's. `created` is true when made by this start.
        case kept(path: String, created: Bool)
        /// Made by `serve` with no file to keep it in, and shown once on the terminal.
        case shown
    }

    /// `--admin-token-file`, else `$LATCHKEY_ADMIN_TOKEN`, else the systemd credential;
    /// nil when none is given. A trailing newline in a file is not part of the token.
    package static func supplied(file: String?) throws -> (token: String, origin: Origin)? {
        if let file { return (text(try SecretFile.read(file)), .file(file)) }
        if let token = ProcessInfo.processInfo.environment["LATCHKEY_ADMIN_TOKEN"], !token.isEmpty { return (token, .environment) }
        if let data = try SecretFile.credential(credentialName) { return (text(data), .credential) }
        return nil
    }

    private static func text(_ data: Data) -> String {
        var token = String(decoding: data, as: UTF8.self)
        while token.hasSuffix("\n") || token.hasSuffix("\r") { token.removeLast() }
        return token
    }

    /// A new token: 32 random bytes, base64url (256 bits).
    package static func generate() throws -> String {
        Base64URL.encode(try SecureRandom.bytes(count: 32))
    }

    /// Refuses a token estimated below ``minimumBits`` by ``SecretStrength``, which reads
    /// repeats, sequences, keyboard walks and common words for what they are:
    /// `password` four times, forty zeros and `ab` twenty times are refused, and 32 random
    /// bytes in base64url, hex or base64 pass.
    package static func checkStrength(_ token: String) throws {
        let estimate = SecretStrength.estimate(token)
        guard estimate.bits >= minimumBits else {
            let found = estimate.patterns.isEmpty ? "" : ", built of \(estimate.patterns.joined(separator: ", "))"
            throw CommandFailure(
                "the admin token is too weak (about \(Int(estimate.bits)) bits\(found); at least \(Int(minimumBits)) are needed): make one with latchkey admin generate-token"
            )
        }
    }
}
