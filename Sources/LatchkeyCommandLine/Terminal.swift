#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
#if canImport(Glibc)
import Glibc
#endif

/// Prompts on the controlling terminal. Prompts go to stderr, so `--json` output on stdout
/// stays clean; nothing is asked when stdin is not a terminal.
enum Terminal {
    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 }

    static func ask(_ prompt: String) -> String? {
        FileDescriptorIO.write(STDERR_FILENO, prompt)
        return readLine(strippingNewline: true)
    }

    /// Reads a line with echo off (a passphrase).
    static func readSecret(_ prompt: String) -> String? {
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { return ask(prompt) }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
            FileDescriptorIO.write(STDERR_FILENO, "\n")
        }
        return ask(prompt)
    }

    /// A yes/no question; only `y` or `yes` is yes, and no terminal means no.
    static func confirm(_ prompt: String) -> Bool {
        guard isInteractive, let answer = ask(prompt)?.trimmingSpaces().lowercased() else { return false }
        return answer == "y" || answer == "yes"
    }

    static func note(_ text: String) {
        TextOutput.error(text)
    }
}
