import Foundation

/// Mail through the system's MTA: the message on the standard input of `sendmail -t -i`
/// (recipients from the headers; a lone `.` line is not the end), the interface every
/// Linux MTA provides (Postfix, Exim, OpenSMTPD, msmtp, nullmailer). A non-zero exit is
/// a temporary failure: the MTA keeps what it accepted, and says why on its stderr.
struct SendmailTransport: MailTransport {
    /// The program, `/usr/sbin/sendmail` unless told otherwise.
    var path: String = "/usr/sbin/sendmail"

    func send(_ message: MailMessage, from: String) async throws {
        let data = try message.rendered(from: from)
        let path = path
        try await BlockingWork.run {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = ["-t", "-i", "-f", from]
            let input = Pipe()
            let errors = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            do {
                try process.run()
            } catch {
                throw MailError(.temporary, "cannot run \(path)", underlying: error)
            }
            // Unix line ends for sendmail; it writes its own.
            let text = String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
            try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
            try? input.fileHandleForWriting.close()
            let said = (try? errors.fileHandleForReading.readToEnd()) ?? Data()
            process.waitUntilExit()
            guard process.terminationReason == .exit, process.terminationStatus == 0 else {
                let reason = String(decoding: said.prefix(300), as: UTF8.self).unicodeScalars
                    .map { $0.properties.generalCategory == .control ? " " : Character($0) }
                throw MailError(.temporary, "\(path) exited with \(process.terminationStatus): \(String(reason))")
            }
        }
    }
}
