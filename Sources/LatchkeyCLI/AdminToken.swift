import Foundation
import LatchkeyCrypto
import LatchkeyIdP

/// Where `latchkey serve` and `latchkey admin` take the admin token from, how strong a
/// supplied one must be, and what `serve` says of it (docs/SECURITY.md, "The reference
/// provider"). Never from the command line: argv is readable by every local user in
/// `/proc/<pid>/cmdline`; and never printed unless `serve` made it and stdout is a
/// terminal: the shipped unit sends stdout to the journal, which others may read.
enum AdminToken {
    /// The systemd credential (`LoadCredential=latchkey-admin-token:<file>`).
    static let credentialName = "latchkey-admin-token"
    /// The least estimated strength of a supplied token (``SecretStrength``).
    static let minimumBits = 128.0

    /// Where the token `serve` uses came from.
    enum Origin: Sendable, Equatable {
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
    static func supplied(file: String?) throws -> (token: String, origin: Origin)? {
        if let file { return (text(try SecretFile.read(file)), .file(file)) }
        if let token = ProcessInfo.processInfo.environment["LATCHKEY_ADMIN_TOKEN"], !token.isEmpty { return (token, .environment) }
        if let data = try SecretFile.credential(credentialName) { return (text(data), .credential) }
        return nil
    }

    /// The token `serve` runs with: a supplied one (checked for strength), else the one
    /// kept in `dataDirectory`, else a new one, kept in a 0600 file there or, without a
    /// data directory, shown when stdout is a terminal and kept in a private temporary
    /// directory when it is not.
    static func forServe(file: String?, dataDirectory: URL?) throws -> (token: String, origin: Origin) {
        if let supplied = try supplied(file: file) {
            try checkStrength(supplied.token)
            return supplied
        }
        if let dataDirectory {
            let kept = try AdminTokenFile.loadOrCreate(in: dataDirectory, make: generate)
            try checkStrength(kept.token)
            return (kept.token, .kept(path: kept.path, created: kept.created))
        }
        if isatty(STDOUT_FILENO) == 1 { return (try generate(), .shown) }
        var template = Array((NSTemporaryDirectory() + "/latchkey-serve-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CommandFailure("cannot make a private directory for the admin token: \(String(cString: strerror(errno)))")
        }
        let kept = try AdminTokenFile.loadOrCreate(in: URL(fileURLWithPath: String(cString: made)), make: generate)
        return (kept.token, .kept(path: kept.path, created: true))
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

    /// Refuses a token estimated below ``minimumBits`` by ``SecretStrength``, which reads
    /// repeats, sequences, keyboard walks and common words for what they are:
    /// `password` four times, forty zeros and `ab` twenty times are refused, and 32 random
    /// bytes in base64url, hex or base64 pass.
    static func checkStrength(_ token: String) throws {
        let estimate = SecretStrength.estimate(token)
        guard estimate.bits >= minimumBits else {
            let found = estimate.patterns.isEmpty ? "" : ", built of \(estimate.patterns.joined(separator: ", "))"
            throw CommandFailure(
                "the admin token is too weak (about \(Int(estimate.bits)) bits\(found); at least \(Int(minimumBits)) are needed): make one with latchkey admin generate-token"
            )
        }
    }
}
