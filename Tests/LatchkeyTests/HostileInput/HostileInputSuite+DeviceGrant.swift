import Foundation
@testable import Latchkey
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import LatchkeyCrypto
import Testing

/// The device authorization grant abused (RFC 8628 §5; docs/SECURITY.md, "Device-code
/// phishing" and "Limits"): polling too fast, expired codes, approving twice, guessing user
/// codes per address and over the code space, deciding with an assertion made for another
/// code or a forged one, too many live codes, another client's device code.
extension HostileInputSuite {
    @Test(
        "polling faster than the interval is slow_down, and the interval grows by 5 s; another client's poll is invalid_grant; a denied code is access_denied and one device.denied",
        arguments: TestStore.available
    )
    func pollingTooFast(engine: TestStore) async throws {
        // RFC 8628's default 5 s interval, judged by a clock the test moves: two polls at
        // the same instant are too fast however slow the machine is.
        let clock = TestClock()
        try await DeviceGrantTests.withDevices(engine: engine, {
            $0.deviceCodeInterval = 5
            $0.clock = clock.provider
        }) { provider, approver, _ in
            let started = try await DeviceGrantTests.startDevice(provider)
            #expect(try await DeviceGrantTests.poll(provider, started.deviceCode).1 == "authorization_pending")
            #expect(try await DeviceGrantTests.poll(provider, started.deviceCode) == (400, "slow_down"))
            clock.advance(by: 5.5)
            #expect(try await DeviceGrantTests.poll(provider, started.deviceCode).1 == "slow_down", "5.5 s later is still too fast: the interval is 10 s now")
            clock.advance(by: 15)
            #expect(try await DeviceGrantTests.poll(provider, started.deviceCode).1 == "authorization_pending", "15 s after the last poll is slow enough: each slow_down added 5 s")
            #expect(try await DeviceGrantTests.poll(provider, started.deviceCode, clientID: "someone-else").1 == "invalid_client")
            let registered = try await provider.admin.call(AdminAPI.createClient, body: .init(id: "tv-app", grantTypes: [GrantType.deviceCode.rawValue]))
            try #require(registered.status == 201)
            #expect(try await DeviceGrantTests.poll(provider, started.deviceCode, clientID: "tv-app").1 == "invalid_grant", "a device code is its client's only")

            try await approver.approveDevice(issuer: provider.issuer, userCode: started.userCode, decision: .deny) { _ in true }
            #expect(try await DeviceGrantTests.poll(provider, started.deviceCode).1 == "access_denied")
            let denied = try await provider.auditEvents().filter { $0.type == .deviceDenied }
            #expect(denied.count == 1 && denied.first?.client == "latchkey-cli" && denied.first?.actor.kind == .identity)
        }
    }

    @Test("an expired code: the poll is expired_token and the code can no longer be approved")
    func expired() async throws {
        let clock = TestClock()
        try await DeviceGrantTests.withDevices({
            $0.deviceCodeLifetime = 2
            $0.clock = clock.provider
        }) { provider, approver, _ in
            let started = try await DeviceGrantTests.startDevice(provider)
            clock.advance(by: 2.2)
            #expect(try await DeviceGrantTests.poll(provider, started.deviceCode).1 == "expired_token")
            let refused = await #expect(throws: LatchkeyError.self) {
                try await approver.approveDevice(issuer: provider.issuer, userCode: started.userCode) { _ in true }
            }
            #expect(refused?.providerError?.error == .invalidCode)
        }
    }

    @Test("a code is decided once: approving twice is refused, and the device's tokens come once")
    func approvingTwice() async throws {
        try await DeviceGrantTests.withDevices { provider, approver, _ in
            let started = try await DeviceGrantTests.startDevice(provider)
            try await approver.approveDevice(issuer: provider.issuer, userCode: started.userCode) { _ in true }
            await #expect(throws: LatchkeyError.self) { try await approver.approveDevice(issuer: provider.issuer, userCode: started.userCode) { _ in true } }
            #expect(try await DeviceGrantTests.poll(provider, started.deviceCode).0 == 200)
            #expect(try await DeviceGrantTests.poll(provider, started.deviceCode).1 == "invalid_grant", "tokens once only")
        }
    }

    @Test("guessing user codes: wrong entries are counted per address; past the limit even the right code is refused")
    func guessing() async throws {
        try await DeviceGrantTests.withDevices({ $0.maximumUserCodeFailuresPerAddress = 3 }) { provider, _, _ in
            let started = try await DeviceGrantTests.startDevice(provider)
            for guess in ["BCDF-GHJK", "ZZZZ-ZZZZ", "not a code"] {
                #expect(try await DeviceGrantTests.lookup(provider, guess) == 400)
            }
            #expect(try await DeviceGrantTests.lookup(provider, started.userCode) == 429, "the right code after too many wrong ones")
        }
        try await DeviceGrantTests.withDevices({ $0.maximumUserCodeFailures = 2 }) { provider, approver, _ in
            let started = try await DeviceGrantTests.startDevice(provider)
            for guess in ["BCDF-GHJK", "ZZZZ-ZZZZ"] {
                await #expect(throws: LatchkeyError.self) { try await approver.approveDevice(issuer: provider.issuer, userCode: guess) { _ in true } }
            }
            let refused = await #expect(throws: LatchkeyError.self) { try await approver.approveDevice(issuer: provider.issuer, userCode: started.userCode) { _ in true } }
            #expect(refused?.providerError?.error == .slowDown, "the whole code space is limited too")
        }
    }

    @Test("a decision needs an assertion over this code's own challenge: a session of another code, a forged assertion or a second use are refused, and the code stays pending")
    func approvalNeedsTheAssertion() async throws {
        try await DeviceGrantTests.withDevices { provider, approver, _ in
            let first = try await DeviceGrantTests.startDevice(provider)
            let second = try await DeviceGrantTests.startDevice(provider)
            func lookup(_ code: String) async throws -> DeviceApprovalExchange.Request {
                let response = try await HTTP1Transport().send(TransportRequest(
                    method: HTTPMethod.post, url: provider.issuer.appendingPathComponent(ProtocolPath.deviceApproval),
                    headers: ["Content-Type": "application/json"], body: try JSONEncoder().encode(DeviceApprovalExchange.Lookup(userCode: code))
                ))
                return try JSONDecoder().decode(DeviceApprovalExchange.Request.self, from: response.body)
            }
            let forFirst = try await lookup(first.userCode)
            let forSecond = try await lookup(second.userCode)
            #expect(forFirst.publicKey.challenge != forSecond.publicKey.challenge)
            // A genuine assertion, made over the first code's challenge…
            let origin = try #require(WebOrigin(provider.issuer)).description
            let credentialID = try #require(try await approver.credentials().first).credentialID
            let (assertion, _) = try approver.authenticator.getAssertion(forFirst.publicKey, origin: origin, credentialID: credentialID)
            func decide(_ submit: String, _ body: DeviceApprovalExchange.Decision) async throws -> Int {
                try await HTTP1Transport().send(TransportRequest(
                    method: HTTPMethod.post, url: try #require(URL(string: submit)), headers: ["Content-Type": "application/json"], body: try JSONEncoder().encode(body)
                )).status
            }
            // …sent to the second code's session is refused.
            #expect(try await decide(forSecond.submit, .init(decision: .approve, credential: assertion)) == 400)
            // A credential this provider never saw is refused.
            var forged = assertion
            forged.rawId = Base64URLBytes(Data(repeating: 7, count: 32))
            forged.id = Base64URL.encode(forged.rawId.data)
            #expect(try await decide(forFirst.submit, .init(decision: .approve, credential: forged)) == 400)
            #expect(try await DeviceGrantTests.poll(provider, second.deviceCode).1 == "authorization_pending")
            // The genuine one where it belongs works once.
            #expect(try await decide(forFirst.submit, .init(decision: .approve, credential: assertion)) == 200)
            #expect(try await decide(forFirst.submit, .init(decision: .approve, credential: assertion)) == 404)
        }
    }

    @Test("live device codes are capped per address: past the cap, device_authorization is refused")
    func liveCodesCapped() async throws {
        try await DeviceGrantTests.withDevices({ $0.maximumLiveDeviceCodesPerAddress = 2 }) { provider, _, _ in
            _ = try await DeviceGrantTests.startDevice(provider)
            _ = try await DeviceGrantTests.startDevice(provider)
            let (status, error, _) = try await DeviceGrantTests.post(provider, ProtocolPath.deviceAuthorization, DeviceAuthorizationRequest(clientID: "latchkey-cli").formItems)
            #expect(status == 429 && error == "slow_down")
            let (unknown, unknownError, _) = try await DeviceGrantTests.post(provider, ProtocolPath.deviceAuthorization, DeviceAuthorizationRequest(clientID: "nobody").formItems)
            #expect(unknown == 401 && unknownError == "invalid_client")
        }
    }

    @Test("live device codes are capped per client too, whatever the addresses")
    func liveCodesCappedPerClient() async throws {
        try await DeviceGrantTests.withDevices({ $0.maximumLiveDeviceCodesPerClient = 2 }) { provider, _, _ in
            _ = try await DeviceGrantTests.startDevice(provider)
            _ = try await DeviceGrantTests.startDevice(provider)
            let (status, error, _) = try await DeviceGrantTests.post(provider, ProtocolPath.deviceAuthorization, DeviceAuthorizationRequest(clientID: "latchkey-cli").formItems)
            #expect(status == 429 && error == "slow_down")
        }
    }

    /// `count` device authorization requests for `clientID`, 8 at a time, the `i`th from
    /// the address `source(i)`: how many got each status. Each may take a minute: the
    /// starts of one client take turns at its pool's lock, and in a full suite on
    /// PostgreSQL one of a thousand waited past 20 s (the lock is tried in a loop, not
    /// queued, so a start can lose several tries in a row).
    static func deviceStarts(_ provider: ProviderHarness, count: Int, clientID: String = "latchkey-cli", from source: @escaping @Sendable (Int) -> String) async -> [Int: Int] {
        await RawConnection.flood(count: count) { index in
            let form = DeviceAuthorizationRequest(clientID: clientID).formItems
            return try await RawConnection.open(port: provider.port, source: source(index)).exchange("POST", "/" + ProtocolPath.deviceAuthorization, form: form, within: 60).status
        }
    }

    /// Red team, milestone 3 (medium): 10 starts from each of 100 addresses filled the
    /// public client's 1,000 places, and every new device got `slow_down` for ten minutes.
    @Test("a crowd of 100 addresses holding 10 device codes each cannot keep an honest device out: its code takes one of theirs, they cannot take it back, and a keyed client is untouched",
          arguments: TestStore.available)
    func deviceCodeCrowd(engine: TestStore) async throws {
        try await DeviceGrantTests.withDevices(engine: engine) { provider, approver, _ in
            // 100 addresses in 100 networks (127.1.0.1 … 127.100.0.1), 10 codes each.
            @Sendable func crowdMember(_ index: Int) -> String { "127.\(1 + index).0.1" }
            let crowd = await Self.deviceStarts(provider, count: 1000) { crowdMember($0 / 10) }
            #expect(crowd == [200: 1000], "the crowd fills the pool: \(crowd)")

            // An honest device elsewhere still gets a code…
            let honest = try await DeviceGrantTests.startDevice(provider)
            // …and the crowd cannot win a place back, from an address that lost one or another.
            #expect(await Self.deviceStarts(provider, count: 2) { crowdMember($0) } == [429: 2])
            #expect(try await DeviceGrantTests.poll(provider, honest.deviceCode).1 == "authorization_pending")
            // A second honest device takes another of the crowd's places.
            let second = await Self.deviceStarts(provider, count: 1) { _ in "127.200.0.1" }
            #expect(second == [200: 1])
            // The honest code works to the end.
            let approved = try await approver.approveDevice(issuer: provider.issuer, userCode: honest.userCode) { _ in true }
            #expect(approved)
            try await Task.sleep(for: .seconds(1.1))
            #expect(try await DeviceGrantTests.poll(provider, honest.deviceCode).0 == 200)

            // A keyed client's devices never shared the public client's pool.
            let signer = try ClientAssertionSigner(key: SigningKey.generate(.es256))
            let jwks = try JSONDecoder().decode(JWKSDocument.self, from: signer.publicJWKSet)
            let registered = try await provider.admin.call(AdminAPI.createClient, body: .init(id: "kiosk", jwks: jwks, grantTypes: [GrantType.deviceCode.rawValue]))
            try #require(registered.status == 201)
            var items = DeviceAuthorizationRequest(clientID: nil).formItems
            items += ClientAuthenticationParameters(
                clientID: "kiosk", clientAssertionType: ClientAssertion.assertionType,
                clientAssertion: try ClientAssertion.make(clientID: "kiosk", audience: provider.issuer.absoluteString, signer: signer)
            ).formItems
            let keyed = try await DeviceGrantTests.post(provider, ProtocolPath.deviceAuthorization, items)
            #expect(keyed.0 == 200, "\(keyed.2.map { "\($0)" } ?? "-")")
        }
    }

    @Test("a full pool of single codes from distinct networks gives no place to a newcomer, so nobody's only code is taken; many addresses of one /24 weigh as one network")
    func deviceCodeSinglesKept() async throws {
        try await DeviceGrantTests.withDevices({ $0.maximumLiveDeviceCodesPerClient = 4 }) { provider, _, _ in
            let honest = try await DeviceGrantTests.startDevice(provider)
            let singles = await Self.deviceStarts(provider, count: 3) { "127.\(10 + $0).0.1" }
            #expect(singles == [200: 3])
            #expect(await Self.deviceStarts(provider, count: 1) { _ in "127.50.0.1" } == [429: 1], "no network holds more than the newcomer's would")
            #expect(try await DeviceGrantTests.poll(provider, honest.deviceCode).1 == "authorization_pending")
        }
        try await DeviceGrantTests.withDevices({ $0.maximumLiveDeviceCodesPerClient = 4 }) { provider, _, _ in
            let honest = try await DeviceGrantTests.startDevice(provider)
            // Three addresses of one /24 (127.0.1.1–3) are one network holding three.
            #expect(await Self.deviceStarts(provider, count: 3) { Self.attacker($0) } == [200: 3])
            #expect(await Self.deviceStarts(provider, count: 1) { _ in Self.attacker(50) } == [429: 1], "another address of that /24 gains nothing")
            #expect(await Self.deviceStarts(provider, count: 1) { _ in "127.50.0.1" } == [200: 1], "another network takes one of its places")
            #expect(try await DeviceGrantTests.poll(provider, honest.deviceCode).1 == "authorization_pending")
        }
    }

    @Test("oversized or made-up device grant inputs are refused with their codes: a 2 KiB scope, a 1 KiB or unknown device code, a decision that is neither, a forged session")
    func malformedDeviceInputs() async throws {
        try await DeviceGrantTests.withDevices { provider, _, _ in
            let scope = String(repeating: "s", count: 2048)
            #expect(try await DeviceGrantTests.post(provider, ProtocolPath.deviceAuthorization, DeviceAuthorizationRequest(clientID: "latchkey-cli", scope: scope).formItems).1 == "invalid_request")
            #expect(try await DeviceGrantTests.poll(provider, String(repeating: "d", count: 1024)).1 == "invalid_grant")
            #expect(try await DeviceGrantTests.poll(provider, "made-up-device-code").1 == "invalid_grant")
            let missing = try await DeviceGrantTests.post(provider, ProtocolPath.token, TokenRequest(grantType: .deviceCode, clientID: "latchkey-cli").formItems)
            #expect(missing.1 == "invalid_request")

            let started = try await DeviceGrantTests.startDevice(provider)
            let lookup = try await HTTP1Transport().send(TransportRequest(
                method: HTTPMethod.post, url: provider.issuer.appendingPathComponent(ProtocolPath.deviceApproval),
                headers: ["Content-Type": "application/json"], body: try JSONEncoder().encode(DeviceApprovalExchange.Lookup(userCode: started.userCode))
            ))
            let request = try JSONDecoder().decode(DeviceApprovalExchange.Request.self, from: lookup.body)
            let submit = try #require(URL(string: request.submit))
            let maybe = Data(#"{"decision":"maybe","credential":{"id":"AA","rawId":"AA","type":"public-key","response":{"clientDataJSON":"AA","authenticatorData":"AA","signature":"AA"}}}"#.utf8)
            let undecided = try await HTTP1Transport().send(TransportRequest(method: HTTPMethod.post, url: submit, headers: ["Content-Type": "application/json"], body: maybe))
            #expect(undecided.status == 400)
            let forged = provider.issuer.appendingPathComponent(ProtocolPath.deviceApproval).appendingPathComponent(String(repeating: "A", count: 300))
            let forgedAnswer = try await HTTP1Transport().send(TransportRequest(method: HTTPMethod.post, url: forged, headers: ["Content-Type": "application/json"], body: maybe))
            #expect(forgedAnswer.status == 404 || forgedAnswer.status == 400, "\(forgedAnswer.status)")
            #expect(try await DeviceGrantTests.poll(provider, started.deviceCode).1 == "authorization_pending", "nothing was decided")
        }
    }
}
