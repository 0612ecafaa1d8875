import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// Consent to third-party clients: asked after the passkey, remembered, revocable by an
/// admin, each decision audited; a decision replayed, forged or sent for another session
/// is refused. Over real HTTP with a client known by its metadata document.
@Suite("Provider: consent for third-party clients")
struct ConsentTests {
    typealias P = ProviderTests
    typealias C = ClientMetadataDocumentTests

    struct SignIn {
        var authorization: AuthorizationRequest
        var authenticateURL: URL
        var answer: JSONValue
    }

    /// Signs in for `clientID` up to the assertion's answer.
    static func signIn(_ issuer: URL, _ authenticator: SoftwareAuthenticator, clientID: String) async throws -> SignIn {
        let (status, started, authorization) = try await C.authorize(issuer, clientID: clientID)
        try #require(status == 200, "\(started)")
        let authenticateURL = try P.url(started["authenticateURL"]?.stringValue)
        let (_, challenge) = try await P.request("GET", authenticateURL)
        let options = try PublicKeyCredentialRequestOptionsJSON(json: challenge.json())
        let (assertion, _) = try authenticator.getAssertion(options, origin: P.origin(issuer))
        let (_, answer) = try await P.request("POST", authenticateURL, json: try assertion.json())
        return SignIn(authorization: authorization, authenticateURL: authenticateURL, answer: answer)
    }

    static func decide(_ submit: String?, ticket: JSONValue?, _ decision: String) async throws -> (Int, JSONValue) {
        try await P.request("POST", try P.url(submit), json: try JSONValue.object(["ticket": ticket ?? .null, "decision": .string(decision)]).json())
    }

    static func events(_ issuer: URL, _ type: AuditEventType) async throws -> [AuditEvent] {
        try await AuditLogTests.events(issuer, type: type.rawValue)
    }

    @Test("asked once after the passkey: allowed, the code follows; a replayed, forged or misdirected decision is refused; remembered next time; an admin's revocation ends the grant and asks again; each decision audited")
    func consentLifecycle() async throws {
        try await C.withDocuments { documents, _ in
            try await C.provider { issuer, authenticator in
                let (identity, _) = try await P.bind(issuer, authenticator)
                let clientID = documents.appendingPathComponent("good.json").absoluteString
                let first = try await Self.signIn(issuer, authenticator, clientID: clientID)
                let consent = try #require(first.answer["consent"], "\(first.answer)")
                #expect(consent["scopes"]?.arrayValue?.compactMap(\.stringValue) == ["openid"] && consent["clientID"]?.stringValue == clientID)

                // A forged ticket, and the right ticket for another session, are refused.
                var forged = try #require(consent["ticket"]?.stringValue)
                forged = String(forged.dropLast()) + (forged.hasSuffix("A") ? "B" : "A")
                #expect(try await Self.decide(consent["submit"]?.stringValue, ticket: .string(forged), "approve").0 == 404)
                let other = first.authenticateURL.deletingLastPathComponent().appendingPathComponent("another-session").appendingPathComponent("consent")
                #expect(try await Self.decide(other.absoluteString, ticket: consent["ticket"], "approve").0 == 404)

                let (approved, redirect) = try await Self.decide(consent["submit"]?.stringValue, ticket: consent["ticket"], "approve")
                #expect(approved == 200, "\(redirect)")
                let client = try OAuthClient(configuration: .init(issuer: issuer, clientID: clientID, redirectURI: try #require(URL(string: C.redirectURI))))
                let code = try await client.authorizationCode(from: try P.url(redirect["redirectURL"]?.stringValue), for: first.authorization)
                let tokens = try await client.exchange(code: code, for: first.authorization)
                // The same decision again: the ticket is spent.
                #expect(try await Self.decide(consent["submit"]?.stringValue, ticket: consent["ticket"], "approve").0 == 404)

                // Remembered: the next sign-in goes straight back with a code.
                let second = try await Self.signIn(issuer, authenticator, clientID: clientID)
                #expect(second.answer["consent"] == nil && second.answer["redirectURL"]?.stringValue?.contains("code=") == true, "\(second.answer)")
                #expect(try await Self.events(issuer, .consentGranted).count == 1)
                #expect(try await Self.events(issuer, .consentRemembered).count == 1)

                // Revoked: the client's tokens for this person end, and the next sign-in asks again.
                let revoked = try await P.admin(issuer).call(AdminAPI.revokeConsent, identity, body: .init(client: clientID))
                #expect(revoked.status == 200)
                await #expect(throws: OAuthError.self) { _ = try await client.refresh(tokens) }
                #expect(try await P.admin(issuer).call(AdminAPI.revokeConsent, identity, body: .init(client: clientID)).status == 404)
                let third = try await Self.signIn(issuer, authenticator, clientID: clientID)
                #expect(third.answer["consent"] != nil, "\(third.answer)")
                #expect(try await Self.events(issuer, .consentRevoked).count == 1)
            }
        }
    }

    @Test("denied: the client gets access_denied with its state, no code, and the denial is audited")
    func denied() async throws {
        try await C.withDocuments { documents, _ in
            try await C.provider { issuer, authenticator in
                _ = try await P.bind(issuer, authenticator)
                let clientID = documents.appendingPathComponent("good.json").absoluteString
                let signIn = try await Self.signIn(issuer, authenticator, clientID: clientID)
                let consent = try #require(signIn.answer["consent"])
                let (status, answer) = try await Self.decide(consent["submit"]?.stringValue, ticket: consent["ticket"], "deny")
                #expect(status == 200)
                let redirect = try #require(answer["redirectURL"]?.stringValue)
                #expect(redirect.contains("error=access_denied") && !redirect.contains("code=") && redirect.contains("state="))
                #expect(try await Self.events(issuer, .consentDenied).count == 1)
            }
        }
    }
}

extension ConsentTests {
    @Test("consent cannot be bypassed: a third-party client is refused at the first-party authorization challenge endpoint (unauthorized_client)")
    func noFirstPartyBypass() async throws {
        try await C.withDocuments { documents, _ in
            try await C.provider { issuer, _ in
                let clientID = documents.appendingPathComponent("good.json").absoluteString
                let pkce = try PKCE.generate()
                let response = try await HTTPExchange.form(issuer.appendingPathComponent(ProtocolPath.authorizationChallenge), AuthorizationChallengeRequest(
                    clientID: clientID, scope: "openid", codeChallenge: pkce.challenge, codeChallengeMethod: PKCE.challengeMethod
                ).formItems)
                #expect(response.status == 400 && response.errorCode == "unauthorized_client", "\(response.text)")
            }
        }
    }
}
