import Foundation
@testable import Latchkey
@testable import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyTestSupport
import LatchkeyProtocol
import Testing
import LatchkeyWebAuthn

/// Device linking end to end: two vaults and the in-process provider over real HTTP.
@Suite("Transfers: export and import with codes", .timeLimit(.minutes(5)))
struct TransferTests {
    /// An export running in the background, its events recorded as they come.
    final class ExportWatcher: Sendable {
        let events = CallCounter<ExportEvent>()
        let outcome = CallCounter<Result<Void, LatchkeyError>>()
        let task: Task<Void, Never>

        init(_ embedded: Embedded, credential: String) {
            let events = events
            let outcome = outcome
            task = Task {
                do {
                    for try await event in embedded.exportCredential(id: credential) { events.record(event) }
                    outcome.record(.success(()))
                } catch {
                    outcome.record(.failure(error as? LatchkeyError ?? LatchkeyError.invalidArgument(reason: "\(error)")))
                }
            }
        }

        /// Waits for an event `match` accepts, for as long as the export runs: no wall-clock
        /// deadline, which a loaded machine overruns (the suite's time limit bounds a hang).
        /// An export that ended without the event throws what ended it, so a failure names
        /// its cause instead of "no event came".
        func wait<Value>(for match: (ExportEvent) -> Value?) async throws -> Value {
            while true {
                // The outcome is read before the events: an event recorded before the end is seen.
                let ended = outcome.values.first
                if let value = events.values.lazy.compactMap(match).last { return value }
                if let ended {
                    let cause = switch ended {
                    case .success: "the export finished"
                    case .failure(let error): "the export failed: \(error)"
                    }
                    throw LatchkeyError.invalidArgument(reason: "the awaited export event did not come (\(cause)); events: \(events.values)")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        func code() async throws -> TransferCode {
            try await wait { event in
                switch event {
                case .codeIssued(let code, _), .codeRotated(let code, _): code
                default: nil
                }
            }
        }

        func finished() async -> Result<Void, LatchkeyError>? {
            await task.value
            return outcome.values.first
        }
    }

    /// The exporter (with a bound credential for ada) and an empty importer vault.
    struct Devices: Sendable {
        let provider: ProviderHarness
        let exporter: Embedded
        let importer: Embedded
        let credential: Credential
        let identity: String
        let exporterTraffic: RecordingTransport
        let importerTraffic: RecordingTransport
    }

    static func withDevices(
        engine: TestStore? = nil,
        _ configure: @Sendable (inout ProviderConfiguration) -> Void = { _ in },
        exporterPoll: Duration = .milliseconds(50),
        confirm: @escaping @Sendable (FlowStep) async throws -> StepAnswer = { _ in .approve },
        _ body: @escaping @Sendable (Devices) async throws -> Void
    ) async throws {
        let second = try TemporaryVault()
        defer { second.cleanUp() }
        try await ProviderHarness.withVault(engine: engine, configure) { provider, first in
            let exporterTraffic = RecordingTransport()
            let importerTraffic = RecordingTransport()
            let exporter = try first.embedded(allowing: [provider.host], stepHandler: confirm, transport: exporterTraffic, pollInterval: exporterPoll)
            let importer = try second.embedded(allowing: [provider.host], transport: importerTraffic)
            let (identity, bindURL) = try await provider.createIdentity("ada")
            let bound = try await exporter.registerCredential(from: bindURL)
            try await body(Devices(
                provider: provider, exporter: exporter, importer: importer, credential: bound.credential,
                identity: identity, exporterTraffic: exporterTraffic, importerTraffic: importerTraffic
            ))
        }
    }

    @Test("export → import → approve: the importer signs in with its own new key, which never left it", arguments: TestStore.available)
    func exportImportApprove(engine: TestStore) async throws {
        let asked = CallCounter<FlowStep>()
        try await Self.withDevices(engine: engine, confirm: { step in
            asked.record(step)
            return .approve
        }) { devices in
            let export = ExportWatcher(devices.exporter, credential: devices.credential.id)
            let code = try await export.code()
            let imported = try await devices.importer.importCredential(code: code.displayed.lowercased(), deviceName: "build-box", issuer: devices.provider.issuer)
            let credential = try #require(imported.first)
            #expect(imported.count == 1 && credential.id != devices.credential.id && credential.user.name == "ada")
            #expect(await export.finished() != nil)

            // The approval showed the importer's name and the fingerprint of its key.
            let step = try #require(asked.values.first)
            #expect(step.name == .confirmImport && step.importRequest?.deviceName == "build-box")
            let vault = try #require(devices.importer.authenticator.vault as? KeyVault)
            let importedKey = try vault.signingKey(credential.handle)
            let thumbprint = try (try vault.entry(credential.handle).publicKey.jwk).thumbprint()
            #expect(step.importRequest?.thumbprint == thumbprint)
            #expect(step.importRequest?.fingerprint == ImportRequest.fingerprint(ofThumbprint: thumbprint))
            #expect(step.importRequest?.fingerprint.count == 19)
            let events = export.events.values.map { "\($0)" }
            #expect(events.contains { $0.hasPrefix("codeIssued") } && events.contains { $0.hasPrefix("importRequested") } && events.last?.hasPrefix("completed") == true)

            // The importer signs in as the same identity with its own credential.
            let tokens = try await devices.provider.signIn(devices.importer)
            #expect(tokens.claims?.subject == devices.identity)
            let listed = try await devices.provider.admin.call(AdminAPI.credentials, devices.identity)
            #expect(listed.answer?.credentials.count == 2)
            let approvals = try await devices.provider.auditEvents().filter { $0.type == .transferApproved }
            #expect(approvals.count == 1 && approvals.first?.subject == devices.identity && approvals.first?.details?.credential == credential.id)

            // No private key byte crossed the wire, in any encoding.
            let pkcs8 = try #require(importedKey.software).pkcs8DERRepresentation
            let scalar = try #require(Self.privateScalar(pkcs8))
            let secrets = [pkcs8, scalar, Data(Base64URL.encode(scalar).utf8), Data(Base64URL.encode(pkcs8).utf8),
                           Data(scalar.base64EncodedString().utf8), Data(pkcs8.base64EncodedString().utf8), Data(scalar.map { String(format: "%02x", $0) }.joined().utf8)]
            let bodies = (devices.importerTraffic.requests + devices.exporterTraffic.requests).compactMap(\.body)
            #expect(!bodies.isEmpty)
            for body in bodies {
                for secret in secrets { #expect(body.range(of: secret) == nil) }
            }

            // The code was single use.
            let reused = await #expect(throws: LatchkeyError.self) {
                try await devices.importer.importCredential(code: code.displayed, deviceName: "again", issuer: devices.provider.issuer)
            }
            #expect(reused?.code == .invalidTransferCode)
        }
    }

    @Test("decline: nothing is bound and the importer's new key is deleted")
    func decline() async throws {
        try await Self.withDevices(confirm: { _ in .decline }) { devices in
            let export = ExportWatcher(devices.exporter, credential: devices.credential.id)
            let code = try await export.code()
            let error = await #expect(throws: LatchkeyError.self) {
                try await devices.importer.importCredential(code: code.displayed, deviceName: "intruder", issuer: devices.provider.issuer)
            }
            #expect(error?.code == .transferDeclined)
            #expect(try await devices.importer.credentials().isEmpty)
            let listed = try await devices.provider.admin.call(AdminAPI.credentials, devices.identity)
            #expect(listed.answer?.credentials.count == 1)
            _ = await export.finished()
            #expect(export.events.values.contains { if case .declined = $0 { true } else { false } })
        }
    }

    @Test("an expired code is refused")
    func expiredCode() async throws {
        // The exporter polls rarely, so the code is not rotated before the importer tries.
        let clock = TestClock()
        try await Self.withDevices({
            $0.transferCodeLifetime = 1
            $0.clock = clock.provider
        }, exporterPoll: .seconds(30)) { devices in
            let export = ExportWatcher(devices.exporter, credential: devices.credential.id)
            let code = try await export.code()
            clock.advance(by: 1.3)
            let error = await #expect(throws: LatchkeyError.self) {
                try await devices.importer.importCredential(code: code.displayed, deviceName: "late", issuer: devices.provider.issuer)
            }
            #expect(error?.code == .invalidTransferCode && error?.providerError?.errorDescription?.contains("expired") == true)
            export.task.cancel()
        }
    }

    @Test("a rotated code: the old one is refused, the new one works")
    func rotatedCode() async throws {
        // Time moves only when the test says, so the new code cannot rotate again before
        // it is redeemed, however loaded the machine is.
        let clock = TestClock()
        try await Self.withDevices({
            $0.transferCodeLifetime = 4
            $0.clock = clock.provider
        }) { devices in
            let export = ExportWatcher(devices.exporter, credential: devices.credential.id)
            let first = try await export.code()
            clock.advance(by: 4.5)
            let rotated = try await export.wait { event -> TransferCode? in
                if case .codeRotated(let code, _) = event { code } else { nil }
            }
            #expect(rotated != first)
            let old = await #expect(throws: LatchkeyError.self) {
                try await devices.importer.importCredential(code: first.displayed, deviceName: "slow", issuer: devices.provider.issuer)
            }
            #expect(old?.code == .invalidTransferCode)
            let imported = try await devices.importer.importCredential(code: rotated.displayed, deviceName: "quick", issuer: devices.provider.issuer)
            #expect(imported.count == 1)
        }
    }

    @Test("five wrong codes kill the transfer: the sixth attempt, even right, is refused")
    func wrongCodes() async throws {
        try await Self.withDevices { devices in
            let export = ExportWatcher(devices.exporter, credential: devices.credential.id)
            let code = try await export.code()
            let symbols = Array(code.symbols)
            let alphabet = CrockfordBase32.alphabet
            for attempt in 0..<5 {
                // Same prefix (so it counts against this code), wrong secret.
                var guess = symbols
                guess[8] = alphabet[(alphabet.firstIndex(of: symbols[8]).map { $0 + 1 + attempt } ?? 0) % 32]
                let error = await #expect(throws: LatchkeyError.self) {
                    try await devices.importer.importCredential(code: String(guess), deviceName: "guesser", issuer: devices.provider.issuer)
                }
                #expect(error?.code == .invalidTransferCode, "attempt \(attempt + 1)")
            }
            let sixth = await #expect(throws: LatchkeyError.self) {
                try await devices.importer.importCredential(code: code.displayed, deviceName: "guesser", issuer: devices.provider.issuer)
            }
            #expect(sixth?.code == .invalidTransferCode)
            guard case .failure(let ended)? = await export.finished() else {
                Issue.record("the export did not end with an error")
                return
            }
            #expect(ended.code == .transferEnded && ended.reason.contains("wrong codes"))
            #expect(try await devices.importer.credentials().isEmpty)
        }
    }

    @Test("an exporter without a valid credential is refused")
    func exporterWithoutCredential() async throws {
        try await Self.withDevices { devices in
            var missing: LatchkeyError?
            do {
                for try await _ in devices.exporter.exportCredential(id: "no-such-credential") {}
            } catch {
                missing = error as? LatchkeyError
            }
            #expect(missing?.code == .noCredential)

            let revocation = try await devices.provider.admin.call(AdminAPI.revokeCredential, devices.credential.id)
            #expect(revocation.status == 200)
            var revoked: LatchkeyError?
            do {
                for try await _ in devices.exporter.exportCredential(id: devices.credential.id) {}
            } catch {
                revoked = error as? LatchkeyError
            }
            #expect(revoked?.code == .credentialRevoked)
            #expect(try await devices.exporter.credentials().first?.state == .revoked)
        }
    }

    @Test("cancelling the export cancels the transfer at the provider; completion handlers run once")
    func cancellation() async throws {
        try await Self.withDevices { devices in
            let events = CallCounter<ExportEvent>()
            let completions = CallCounter<Result<Void, LatchkeyError>>()
            let task = devices.exporter.exportCredential(id: devices.credential.id, onEvent: { events.record($0) }, completion: { completions.record($0) })
            // A bound on the waits below, not a measure: a loaded CI machine took over 20 s.
            let deadline = Date().addingTimeInterval(90)
            var code: TransferCode?
            while code == nil, Date() < deadline {
                if case .codeIssued(let issued, _)? = events.values.first { code = issued }
                try await Task.sleep(for: .milliseconds(20))
            }
            task.cancel()
            while completions.values.isEmpty, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(300))
            #expect(completions.values.count == 1)
            if case .failure(let error)? = completions.values.first { #expect(error.code == .cancelled) } else { Issue.record("not cancelled") }
            // The provider hears of the cancellation from a task of its own, after the
            // completion handler ran: under load the first late import can reach it first,
            // so it is tried until the provider refuses the code.
            let displayed = try #require(code).displayed
            var refused: LatchkeyError?
            repeat {
                do {
                    _ = try await devices.importer.importCredential(code: displayed, deviceName: "late", issuer: devices.provider.issuer)
                    Issue.record("a cancelled transfer was imported")
                    break
                } catch let error as LatchkeyError {
                    refused = error
                }
                if refused?.code != .invalidTransferCode { try await Task.sleep(for: .milliseconds(200)) }
            } while refused?.code != .invalidTransferCode && Date() < deadline
            #expect(refused?.code == .invalidTransferCode, "\(String(describing: refused))")

            let imported = CallCounter<Result<[Credential], LatchkeyError>>()
            devices.importer.importCredential(code: "bad", deviceName: "x", issuer: devices.provider.issuer) { imported.record($0) }
            while imported.values.isEmpty, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            switch imported.values.first {
            case .failure(let error)?: #expect(error.code == .invalidTransferCode)
            case .success?: Issue.record("a bad code worked")
            case nil: Issue.record("the import of a bad code did not finish in time")
            }
        }
    }

    /// The 32-byte private scalar inside a P-256 PKCS#8 (SEC1 ECPrivateKey: version 1, then
    /// an OCTET STRING of 32 bytes).
    static func privateScalar(_ pkcs8: Data) -> Data? {
        let bytes = [UInt8](pkcs8)
        for index in 0..<(bytes.count - 36) where bytes[index..<index + 5] == [0x02, 0x01, 0x01, 0x04, 0x20] {
            return Data(bytes[index + 5..<index + 37])
        }
        return nil
    }
}
