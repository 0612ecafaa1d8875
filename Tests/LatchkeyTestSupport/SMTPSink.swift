public import Foundation

/// A real SMTP server on loopback for the mail tests: `Tests/Interop/smtp_sink.py`
/// (aiosmtpd from PyPI, which `.ci/run` installs), writing each message it takes to a
/// temporary directory, decoded.
public final class SMTPSink: Sendable {
    public let port: Int
    private let process: SpawnedProcess
    private let directory: URL

    /// Whether python3 has aiosmtpd.
    public static var available: Bool { get async { await PythonInterop.available(["aiosmtpd"]) } }

    /// One message as the server took it.
    public struct Message: Decodable, Sendable {
        public var to: [String]
        public var from: String
        public var subject: String
        public var body: String
        public var tls: Bool
        public var authenticated: Bool?
    }

    /// Starts the server; `starttls` is a certificate and key (PEM) to offer STARTTLS with
    /// (then required), `auth` a user and password it then requires (over TLS);
    /// `deferring` a domain whose recipients are answered 450 at `RCPT TO`.
    public init(starttls: (certificate: URL, key: URL)? = nil, auth: (user: String, password: String)? = nil, deferring domain: String? = nil) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-smtp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var arguments = [PythonInterop.scripts.appendingPathComponent("smtp_sink.py").path, directory.path]
        if let starttls { arguments += ["--starttls", starttls.certificate.path, starttls.key.path] }
        if let auth { arguments += ["--auth", auth.user, auth.password] }
        if let domain { arguments += ["--defer-rcpt", domain] }
        let (process, line) = try await ChildProcess.startHelper(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + arguments, name: "the SMTP sink"
        ) { $0.hasPrefix("READY ") }
        guard let port = Int(line.dropFirst(6)) else {
            ChildProcess.stop(process)
            throw TestSupportError("the SMTP sink answered no port: \(line)")
        }
        self.process = process
        self.port = port
    }

    deinit {
        ChildProcess.stop(process)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Every message taken so far, in order.
    public func messages() -> [Message] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
        return names.compactMap { name in
            (try? Data(contentsOf: directory.appendingPathComponent(name))).flatMap { try? JSONDecoder().decode(Message.self, from: $0) }
        }
    }

    /// How many recipients were answered 450 (`deferring`).
    public func deferredRecipients() -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasPrefix("refused-") }.count
    }

    /// Waits up to `timeout` for the `index`th (0-based) message to `address`.
    public func message(to address: String, index: Int = 0, timeout: TimeInterval = 20) async throws -> Message {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let mine = messages().filter { $0.to.contains(address) }
            if mine.count > index { return mine[index] }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestSupportError("no message \(index) to \(address) within \(timeout) s; the server has \(messages().count)")
    }
}
