import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Mail through the system's MTA: the message on the standard input of `sendmail -t -i
/// -f FROM` (recipients from the headers; a lone `.` line is not the end), the interface
/// every Linux MTA provides (Postfix, Exim, OpenSMTPD, msmtp, nullmailer). A non-zero exit
/// is a temporary failure; the MTA says why on its stderr.
///
/// Started with `posix_spawn` directly, not Foundation's `Process`, whose `run()` on
/// Linux (Swift 6.3.1) can crash the provider by over-reading `/proc/self/fd` entries
/// (swiftlang/swift-corelibs-foundation #5472). The child gets the message on a Unix
/// socket (so a sendmail that exits early cannot raise SIGPIPE here), /dev/null as stdout
/// and another socket as stderr; every other descriptor of the provider is close-on-exec.
struct SendmailTransport: MailTransport {
    /// The program, `/usr/sbin/sendmail` unless told otherwise.
    var path: String = "/usr/sbin/sendmail"

    func send(_ message: MailMessage, from: String) async throws {
        // Unix line ends for sendmail; it writes its own.
        let text = String(decoding: try message.rendered(from: from), as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
        let path = path
        try await BlockingWork.run {
            try Self.run(path, ["-t", "-i", "-f", from], input: Data(text.utf8))
        }
    }

    /// Runs `path arguments…` with `input` on its stdin; throws unless it exits 0.
    private static func run(_ path: String, _ arguments: [String], input: Data) throws {
        var stdin: [Int32] = [-1, -1]
        var stderr: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &stdin) == 0 else {
            throw MailError.temporary("cannot make a socket for \(path) (errno \(errno))")
        }
        defer { for descriptor in stdin where descriptor >= 0 { close(descriptor) } }
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &stderr) == 0 else {
            throw MailError.temporary("cannot make a socket for \(path) (errno \(errno))")
        }
        defer { for descriptor in stderr where descriptor >= 0 { close(descriptor) } }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin[1], 0)
        posix_spawn_file_actions_addopen(&actions, 1, _PATH_DEVNULL, O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stderr[1], 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = argv.withUnsafeBufferPointer { posix_spawn(&pid, path, &actions, nil, $0.baseAddress!, environ) }
        guard spawned == 0 else { throw MailError.temporary("cannot run \(path) (errno \(spawned))") }
        close(stdin[1])
        stdin[1] = -1
        close(stderr[1])
        stderr[1] = -1

        var offset = 0
        while offset < input.count {
            let sent = input.withUnsafeBytes { Glibc.send(stdin[0], $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { break }
            offset += sent
        }
        shutdown(stdin[0], Int32(SHUT_WR))

        var said = Data()
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = read(stderr[0], &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            if said.count < 4096 { said.append(contentsOf: buffer.prefix(count)) }
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        // WIFEXITED and WEXITSTATUS, which Swift does not import as macros.
        let exited = status & 0x7F == 0
        let code = (status >> 8) & 0xFF
        guard exited, code == 0, offset == input.count else {
            let reason = String(decoding: said.prefix(300), as: UTF8.self).unicodeScalars
                .map { $0.properties.generalCategory == .control ? " " : Character($0) }
            // sysexits.h: EX_NOUSER (67) and EX_NOHOST (68) refuse the recipient, not the MTA.
            let kind: MailError.Code = exited && (code == 67 || code == 68) ? .recipientRefused : .temporary
            throw MailError(kind, "\(path) \(exited ? "exited with \(code)" : "was killed"): \(String(reason))")
        }
    }
}
