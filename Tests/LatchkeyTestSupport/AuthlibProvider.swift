public import Foundation
import LatchkeyOAuth
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An independent OAuth provider on loopback for the interop tests:
/// `Tests/Interop/authlib_provider.py` (Authlib and Flask from PyPI, which `.ci/run`
/// installs), with RFC 7523 `private_key_jwt` client credentials and the RFC 8628 device
/// grant, and test-only endpoints to register clients and decide device codes.
public final class AuthlibProvider: Sendable {
    public let issuer: URL
    private let process: SpawnedProcess

    /// Whether python3 has Authlib and Flask.
    public static var available: Bool { get async { await PythonInterop.available(["authlib", "flask"]) } }

    public init() async throws {
        let script = PythonInterop.scripts.appendingPathComponent("authlib_provider.py").path
        let (process, line) = try await ChildProcess.startHelper(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", script], name: "the Authlib provider"
        ) { $0.hasPrefix("READY ") }
        guard let issuer = URL(string: String(line.dropFirst(6))) else {
            ChildProcess.stop(process)
            throw TestSupportError("the Authlib provider answered no issuer: \(line)")
        }
        self.process = process
        self.issuer = issuer
    }

    deinit {
        ChildProcess.stop(process)
    }

    /// Registers a client: public without `jwks`, else authenticated by `private_key_jwt`.
    /// With `slowDownFirst`, the first poll of each of its device codes is `slow_down`.
    public func register(clientID: String, jwks: Data? = nil, grantTypes: [String], scope: String = "", slowDownFirst: Bool = false) async throws {
        var body: [String: JSONValue] = [
            "client_id": .string(clientID), "grant_types": .array(grantTypes.map(JSONValue.string)), "scope": .string(scope), "slow_down_first": .bool(slowDownFirst),
        ]
        if let jwks { body["jwks"] = try JSONValue(json: jwks) }
        try await post("test/clients", .object(body), expecting: 201)
    }

    /// Plays the person at the verification page: approves or denies `userCode`.
    public func decide(userCode: String, approve: Bool) async throws {
        try await post("test/device/decide", ["user_code": .string(userCode), "approve": .bool(approve)], expecting: 200)
    }

    private func post(_ path: String, _ body: JSONValue, expecting status: Int) async throws {
        var request = URLRequest(url: issuer.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try body.json()
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == status else {
            throw TestSupportError("Authlib provider \(path): \(String(decoding: data, as: UTF8.self))")
        }
    }
}
