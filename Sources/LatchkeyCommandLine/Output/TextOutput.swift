#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Glibc
import Latchkey
import LatchkeyProtocol

/// How human-readable output reaches the terminal. Everything the CLI prints, to stdout or
/// stderr, passes through ``String/displaySafe(maximumLength:)`` line by line, so no text
/// from a provider, an ID token, the vault or an error can drive the terminal (retitle it,
/// clear it, move the cursor) or reorder what the user reads with bidi controls, whatever
/// path it took to get here (docs/SECURITY.md, "What the terminal shows").
///
/// Values from outside are also made safe one by one with ``field(_:)``, which turns their
/// own line breaks into U+FFFD, so a value cannot forge a line of its own.
package enum TextOutput {
    /// The longest line printed; a longer one is cut.
    static let maximumLineLength = 8192

    /// `text` on standard output, each of its lines made safe.
    package static func line(_ text: String) {
        FileDescriptorIO.write(STDOUT_FILENO, safe(text))
    }

    /// `text` on standard error, each of its lines made safe.
    static func error(_ text: String) {
        FileDescriptorIO.write(STDERR_FILENO, safe(text))
    }

    /// One value from outside (a user name, an issuer, a subject), safe to embed in a line.
    package static func field(_ value: String, maximumLength: Int = 512) -> String {
        value.displaySafe(maximumLength: maximumLength)
    }

    static func safe(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { String($0).displaySafe(maximumLength: maximumLineLength) }
            .joined(separator: "\n") + "\n"
    }
}
