import Foundation
@testable import LatchkeyOAuth
import Testing

/// The client's side of RFC 8628 without a server: the RFC's examples as vectors, the
/// checks on a provider's answer, the user code's form and the polling schedule.
@Suite("Device authorization grant (RFC 8628): messages and polling")
struct DeviceAuthorizationTests {
    static var vector: JSONValue { get throws { try JOSEVectorTests.vector("rfc8628-device-grant.json") } }

    @Test("RFC 8628 §3.1, §3.4: the example requests encode and read back as the RFC spells them")
    func requests() throws {
        let request = try #require(try Self.vector["deviceAuthorizationRequest"])
        let device = DeviceAuthorizationRequest(clientID: request["clientID"]?.stringValue, scope: request["scope"]?.stringValue)
        #expect(String(decoding: FormEncoding.encode(device.formItems), as: UTF8.self) == request["form"]?.stringValue)
        #expect(DeviceAuthorizationRequest(form: try FormEncoding.decode(Substring(try #require(request["form"]?.stringValue)))) == device)

        let token = try #require(try Self.vector["tokenRequest"])
        let poll = TokenRequest(grantType: .deviceCode, clientID: token["clientID"]?.stringValue, deviceCode: token["deviceCode"]?.stringValue)
        let form = try FormEncoding.decode(Substring(try #require(token["form"]?.stringValue)))
        #expect(TokenRequest(form: form) == poll)
        #expect(form["grant_type"] == GrantType.deviceCode.rawValue)
    }

    @Test("RFC 8628 §3.2: the example response parses; §3.5's error codes are the library's")
    func response() throws {
        let example = try #require(try Self.vector["deviceAuthorizationResponse"])
        let parsed = try DeviceAuthorizationResponse.parse(Data(try #require(example["json"]?.stringValue).utf8))
        #expect(parsed.deviceCode == example["deviceCode"]?.stringValue && parsed.userCode == example["userCode"]?.stringValue)
        #expect(parsed.verificationURI.absoluteString == example["verificationURI"]?.stringValue)
        #expect(parsed.verificationURIComplete?.absoluteString == example["verificationURIComplete"]?.stringValue)
        #expect(parsed.expiresIn == 1800 && parsed.interval == 5)
        let codes = try #require(try Self.vector["errorCodes"]?.arrayValue).compactMap(\.stringValue)
        #expect(codes == [OAuthErrorCode.authorizationPending, .slowDown, .accessDenied, .expiredToken].map(\.rawValue))
    }

    @Test("a hostile provider's answer is refused: control characters in the user code, a non-https verification URI, absurd lifetimes, a huge body")
    func hostileResponses() throws {
        func answer(userCode: String = "WDJB-MJHT", uri: String = "https://example.com/device", expiresIn: Int = 600, interval: Int = 5) -> Data {
            let object: JSONValue = [
                "device_code": "d", "user_code": .string(userCode), "verification_uri": .string(uri), "expires_in": .number(Double(expiresIn)),
                "interval": .number(Double(interval)),
            ]
            return (try? object.json()) ?? Data()
        }
        #expect(throws: OAuthError.self) { try DeviceAuthorizationResponse.parse(answer(userCode: "WDJB\u{1B}[2J")) }
        #expect(throws: OAuthError.self) { try DeviceAuthorizationResponse.parse(answer(userCode: "")) }
        #expect(throws: OAuthError.self) { try DeviceAuthorizationResponse.parse(answer(uri: "http://attacker.example/device")) }
        #expect(throws: OAuthError.self) { try DeviceAuthorizationResponse.parse(answer(uri: "javascript:alert(1)")) }
        #expect(throws: OAuthError.self) { try DeviceAuthorizationResponse.parse(answer(expiresIn: 0)) }
        #expect(throws: OAuthError.self) { try DeviceAuthorizationResponse.parse(answer(expiresIn: 10_000_000)) }
        #expect(throws: OAuthError.self) { try DeviceAuthorizationResponse.parse(answer(interval: 0)) }
        #expect(throws: OAuthError.self) { try DeviceAuthorizationResponse.parse(Data(repeating: 0x20, count: 65 * 1024)) }
        #expect(throws: OAuthError.self) { try DeviceAuthorizationResponse.parse(Data("{\"user_code\":\"X\"}".utf8)) }
        #expect(try DeviceAuthorizationResponse.parse(answer(uri: "http://127.0.0.1:8080/device")).interval == 5, "loopback http is allowed")
    }

    @Test("RFC 8628 §6.1: user codes read back without case, dashes or spaces; other letters and lengths are refused")
    func userCodes() throws {
        for vector in try #require(try Self.vector["userCodes"]?.arrayValue) {
            #expect(DeviceUserCode.normalise(try #require(vector["typed"]?.stringValue)) == vector["normalised"]?.stringValue, "\(vector)")
        }
        #expect(DeviceUserCode.display("WDJBMJHT") == "WDJB-MJHT")
        #expect(DeviceUserCode.alphabet.count == 20 && !DeviceUserCode.alphabet.contains { "AEIOUY".contains($0) })
    }

    @Test("RFC 8628 §3.5: polls every interval, 5 s more after each slow_down, and none past expiry")
    func polling() throws {
        let issued = Date(timeIntervalSince1970: 1_000_000)
        let response = DeviceAuthorizationResponse(deviceCode: "d", userCode: "WDJB-MJHT", verificationURI: URL(string: "https://example.com/device")!, verificationURIComplete: nil, expiresIn: 30, interval: nil)
        var polling = DevicePolling(response, issuedAt: issued)
        #expect(polling.interval == 5, "absent interval means 5 s")
        #expect(polling.nextPoll(after: issued) == issued.addingTimeInterval(5))
        polling.record(.pending)
        #expect(polling.interval == 5)
        polling.record(.slowDown)
        #expect(polling.interval == 10)
        polling.record(.pending)
        #expect(polling.interval == 10, "the longer interval holds for all later polls")
        polling.record(.slowDown)
        #expect(polling.interval == 15)
        #expect(polling.nextPoll(after: issued.addingTimeInterval(10)) == issued.addingTimeInterval(25))
        #expect(polling.nextPoll(after: issued.addingTimeInterval(16)) == nil, "31 s is past the 30 s lifetime")
    }
}
