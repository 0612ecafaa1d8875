#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Glibc
import Latchkey

/// `latchkey agent --confirm`: asks on the agent's own terminal (`/dev/tty`, not stdin)
/// before each signature, like `ssh-add -c`. No answer within a minute, or any answer but
/// `y`/`yes`, is no. What it shows (a provider's names, a process's command name) is
/// escaped like all terminal output.
enum AgentConfirmation {
    static let answerTime: Int32 = 60_000

    @Sendable static func ask(_ request: AgentSignatureRequest) -> Bool {
        let terminal = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard terminal >= 0 else { return false }
        defer { close(terminal) }
        var what = request.kind == "webauthn" ? "sign in" : "sign with a \(TextOutput.field(request.kind, maximumLength: 32)) key"
        if let party = request.relyingParty { what += " at \(TextOutput.field(party, maximumLength: 256))" }
        if let user = request.userName { what += " as \(TextOutput.field(user, maximumLength: 128))" }
        let asker = "pid \(request.pid)" + (request.command.map { " (\(TextOutput.field($0, maximumLength: 32)))" } ?? "")
        let prompt = "\nlatchkey agent: \(asker) asks to \(what) with key \(request.handle.prefix(8)). Allow? [y/N] "
        _ = prompt.withCString { write(terminal, $0, strlen($0)) }
        // Whatever was typed before the question is not an answer to it.
        tcflush(terminal, TCIFLUSH)
        var ready = pollfd(fd: terminal, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, answerTime) == 1 else {
            _ = "no answer: denied\n".withCString { write(terminal, $0, strlen($0)) }
            return false
        }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(terminal, &buffer, buffer.count)
        guard count > 0 else { return false }
        let answer = String(decoding: buffer[0..<count], as: UTF8.self).trimmingWhitespace().lowercased()
        return answer == "y" || answer == "yes"
    }
}
