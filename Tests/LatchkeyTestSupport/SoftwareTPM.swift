public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A software TPM 2.0 (swtpm, from Debian's `swtpm`) on free loopback ports with a state
/// directory of its own, for the TPM tests (`.ci/run` installs swtpm, tpm2-openssl and
/// the swtpm TCTI). ``tcti`` is what `TPM2OPENSSL_TCTI` would hold.
public final class SoftwareTPM: Sendable {
    public let port: Int
    private let process: SpawnedProcess
    /// The TPM's persistent state (its seeds): another swtpm started on it is the same TPM.
    public let state: URL
    private let ownsState: Bool
    private let ownedDirectory: URL?

    /// The environment that points `latchkey` (through OpenSSL's tpm2 provider) at it.
    public var environment: [String: String] { ["TPM2OPENSSL_TCTI": tcti] }

    /// Whether swtpm and OpenSSL's tpm2 provider are installed.
    public static var available: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/swtpm")
            && ["/usr/lib/x86_64-linux-gnu/ossl-modules/tpm2.so", "/usr/lib/aarch64-linux-gnu/ossl-modules/tpm2.so"].contains {
                FileManager.default.fileExists(atPath: $0)
            }
    }

    /// `swtpm:host=127.0.0.1,port=P`.
    public var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    /// Starts a TPM with a fresh state (its own seeds: keys of another TPM do not load),
    /// or, given `state`, the same TPM again (as after a reboot; `state` stays the
    /// caller's).
    public convenience init(state existing: URL? = nil) async throws {
        try await self.init(state: existing, removingWhenDone: nil)
    }

    /// `state`, with `owned` (a directory holding it) removed when the TPM goes.
    private init(state existing: URL?, removingWhenDone owned: URL?) async throws {
        ownedDirectory = owned
        if let existing {
            state = existing
            ownsState = false
        } else {
            state = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-swtpm-\(UUID().uuidString)")
            ownsState = true
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        var lastError = "no free pair of adjacent ports in 20 tries"
        let pidFile = state.appendingPathComponent("swtpm.pid")
        for _ in 0..<20 {
            // The swtpm TCTI talks to the control channel on the command port + 1.
            guard let server = try Self.freePortPair() else { continue }
            try? FileManager.default.removeItem(at: pidFile)
            let (process, output) = try ChildProcess.start(URL(fileURLWithPath: "/usr/bin/swtpm"), [
                "socket", "--tpm2", "--server", "type=tcp,port=\(server),bindaddr=127.0.0.1", "--ctrl", "type=tcp,port=\(server + 1),bindaddr=127.0.0.1",
                "--tpmstate", "dir=\(state.path)", "--flags", "not-need-init,startup-clear", "--pid", "file=\(pidFile.path)",
            ], mergingErrors: true)
            PipeReading.drainInBackground(output.fileHandleForReading)
            if await Self.waitForStart(process, pidFile: pidFile) {
                self.process = process
                port = server
                return
            }
            ChildProcess.stop(process)
            lastError = "swtpm did not start on \(server) and \(server + 1) (taken meanwhile?)"
        }
        throw TestSupportError("cannot start swtpm: \(lastError)")
    }

    deinit {
        // swtpm ignores SIGTERM while it waits for a client; its state is written as it
        // changes, so a kill loses nothing.
        kill()
        if ownsState { try? FileManager.default.removeItem(at: state) }
        if let ownedDirectory { try? FileManager.default.removeItem(at: ownedDirectory) }
    }

    /// Kills the TPM at once, as a crash or an unplugged device would.
    public func kill() {
        // `send` signals only a child not yet reaped, whose PID is still its own.
        process.send(SIGKILL)
        // Polled rather than waited for, so a child stuck in the kernel cannot hold this
        // thread (a deinit, on the cooperative pool) past two seconds.
        let deadline = Date().addingTimeInterval(2)
        while process.isRunning, Date() < deadline { usleep(2_000) }
    }

    /// A TPM as its maker ships it: a fresh state manufactured by `swtpm_setup` with RSA and
    /// ECC endorsement keys and their certificates, signed by a private swtpm-localca made
    /// for it (as `.ci/swtpm.sh` does), then started. ``endorsementRoots`` is that CA's PEM
    /// file (root and issuing certificate), for `serve --ek-roots`.
    public static func manufactured() async throws -> (tpm: SoftwareTPM, endorsementRoots: URL) {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-swtpm-maker-\(UUID().uuidString)")
        let state = work.appendingPathComponent("state"), ca = work.appendingPathComponent("ca")
        for directory in [state, ca] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let files = [
            "localca.conf": "statedir = \(ca.path)\nsigningkey = \(ca.path)/signkey.pem\nissuercert = \(ca.path)/issuercert.pem\ncertserial = \(ca.path)/certserial\n",
            "localca.options": "--platform-manufacturer Latchkey\n--platform-version 2.1\n--platform-model tests\n",
            "setup.conf": "create_certs_tool = /usr/bin/swtpm_localca\ncreate_certs_tool_config = \(work.path)/localca.conf\ncreate_certs_tool_options = \(work.path)/localca.options\nactive_pcr_banks = sha256\n",
        ]
        for (name, text) in files { try Data(text.utf8).write(to: work.appendingPathComponent(name)) }
        let (status, output) = try await ChildProcess.tool([
            "swtpm_setup", "--tpm2", "--tpmstate", state.path, "--create-ek-cert", "--create-platform-cert",
            "--config", work.appendingPathComponent("setup.conf").path, "--logfile", work.appendingPathComponent("setup.log").path,
        ])
        guard status == 0 else {
            let log = (try? String(contentsOf: work.appendingPathComponent("setup.log"), encoding: .utf8)) ?? ""
            throw TestSupportError("swtpm_setup failed (\(status)): \(output) \(log)")
        }
        let roots = work.appendingPathComponent("ek-roots.pem")
        let pem = try Data(contentsOf: ca.appendingPathComponent("swtpm-localca-rootca-cert.pem")) + Data(contentsOf: ca.appendingPathComponent("issuercert.pem"))
        try pem.write(to: roots)
        return (try await SoftwareTPM(state: state, removingWhenDone: work), roots)
    }

    /// A port P with P + 1 free too, or nil when P + 1 is taken.
    private static func freePortPair() throws -> Int? {
        func bound(_ port: UInt16) -> (descriptor: Int32, port: Int)? {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            // As swtpm binds its own (SO_REUSEADDR): a port held only by connections in
            // TIME_WAIT is free to it. Without this, a busy suite's thousands of such
            // connections took P + 1 on every try (connect() favours even ports, bind(0)
            // odd ones), and no pair was found.
            var reuse: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = port.bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ok = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
            }
            guard ok else {
                close(descriptor)
                return nil
            }
            return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
        }
        guard let first = bound(0) else { throw TestSupportError("no free port") }
        defer { close(first.descriptor) }
        guard first.port < 65535, let second = bound(UInt16(first.port + 1)) else { return nil }
        close(second.descriptor)
        return first.port
    }

    /// swtpm writes its pid file once its sockets listen: the file naming this process
    /// proves that it, and not another test's swtpm, holds the ports.
    private static func waitForStart(_ process: SpawnedProcess, pidFile: URL) async -> Bool {
        for _ in 0..<200 where process.isRunning {
            if let text = try? String(contentsOf: pidFile, encoding: .utf8),
               Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) == process.processIdentifier {
                return true
            }
            try? await Task.sleep(for: .milliseconds(25))
        }
        return false
    }
}
