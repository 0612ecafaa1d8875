public import Foundation

/// A standard OpenID Connect relying party on loopback for the browser tests:
/// `Tests/Interop/authlib_relying_party.py` (Authlib's Flask client, which `.ci/run`
/// installs with Authlib and Flask). A browser opened at ``login`` is sent to the
/// provider's `/authorize`, and the RP's `/callback` answers JSON saying whether the ID
/// token checked out.
public final class AuthlibRelyingParty: Sendable {
    public let base: URL
    private let process: SpawnedProcess

    /// Whether python3 has Authlib, Flask and requests (its HTTP client).
    public static var available: Bool { get async { await PythonInterop.available(["authlib", "flask", "requests"]) } }

    public init(issuer: URL, clientID: String) async throws {
        let script = PythonInterop.scripts.appendingPathComponent("authlib_relying_party.py").path
        let (process, line) = try await ChildProcess.startHelper(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", script, issuer.absoluteString, clientID], name: "the Authlib relying party"
        ) { $0.hasPrefix("READY ") }
        guard let base = URL(string: String(line.dropFirst(6))) else {
            ChildProcess.stop(process)
            throw TestSupportError("the Authlib relying party answered no address: \(line)")
        }
        self.process = process
        self.base = base
    }

    deinit {
        ChildProcess.stop(process)
    }

    public var login: URL { base.appendingPathComponent("login") }
    public var callback: URL { base.appendingPathComponent("callback") }
}
