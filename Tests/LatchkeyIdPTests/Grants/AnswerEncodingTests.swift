import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn
import Testing

/// The sign-in's answers are written directly (``JSONObjectWriter``) instead of through
/// `JSONEncoder`; each must be, byte for byte, what `JSONEncoder` with sorted keys wrote
/// before, for ordinary and hostile values, so no client sees a change
/// (docs/PERFORMANCE.md, "Less per request").
@Suite("Sign-in answers written directly")
struct AnswerEncodingTests {
    private static func reference(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    static let texts = ["plain", "", "a\"b\\c/d", "\u{0}\u{1B}[2J\n\u{202E}", "é€😀"]

    @Test("a token response, bearer and DPoP, with and without its optional members")
    func tokenResponse() throws {
        for text in Self.texts {
            for response in [
                TokenResponse(accessToken: "at-" + text, tokenType: .bearer, expiresIn: 3600, refreshToken: text, idToken: "e.y.j", scope: text),
                TokenResponse(accessToken: text.isEmpty ? "x" : text, tokenType: .dpop, expiresIn: 59.9),
                TokenResponse(accessToken: "x", tokenType: AccessTokenType(rawValue: text), expiresIn: nil),
            ] {
                #expect(response.encodedJSON == (try Self.reference(response)), "\(text)")
                if !response.tokenType.rawValue.isEmpty {
                    // Read back as a client reads it (`expires_in` goes out in whole seconds).
                    let decoded = try JSONDecoder().decode(TokenResponse.self, from: response.encodedJSON)
                    #expect(decoded.accessToken == response.accessToken && decoded.tokenType == response.tokenType && decoded.idToken == response.idToken)
                    #expect(decoded.expiresIn == response.expiresIn.map { $0.rounded(.towardZero) })
                }
            }
        }
    }

    @Test("ID token claims as the provider makes them, and parsed claims of other shapes")
    func idTokenClaims() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000.75)
        for text in Self.texts {
            let claims = IDTokenClaims(
                issuer: "https://idp.example/" + text, subject: text.isEmpty ? "s" : text, audiences: [text], expiresAt: now.addingTimeInterval(600),
                issuedAt: now, authorizedParty: text, nonce: text, authTime: now, accessTokenHash: "abc", authenticationMethods: ["pop", text]
            )
            #expect(try claims.encodedJSON == Self.reference(claims), "\(text)")
            let several = IDTokenClaims(issuer: "i", subject: "s", audiences: ["a", text], expiresAt: now, issuedAt: now)
            #expect(try several.encodedJSON == Self.reference(several))
        }
        // Parsed claims with a fraction, a nested object, a boolean, null, -0 or a number
        // past 2^53 take JSONEncoder's path and still come out as it writes them.
        for text in [
            #"{"iss":"i","sub":"s","aud":"a","exp":1800000000.5,"iat":1800000000,"extra":{"b":true,"n":null},"big":9007199254740993,"list":[1,"x"]}"#,
            #"{"iss":"i","sub":"s","aud":["a","b"],"exp":1800000000,"iat":1800000000,"neg":-0}"#,
            #"{"iss":"i","sub":"s","aud":"a","exp":1800000000,"iat":-1800000000,"zero":0}"#,
        ] {
            let parsed = try JSONDecoder().decode(IDTokenClaims.self, from: Data(text.utf8))
            #expect(try parsed.encodedJSON == Self.reference(parsed), "\(text)")
            #expect(try JSONDecoder().decode(IDTokenClaims.self, from: parsed.encodedJSON) == parsed)
        }
    }

    @Test("the authorization challenge's answers, with and without allowed credentials and transports")
    func authorizationChallenge() throws {
        for text in Self.texts {
            for allowed in [nil, [], [PublicKeyCredentialDescriptorJSON(id: Data([1, 2, 3])), .init(id: Data(repeating: 0xFF, count: 64), transports: ["usb", text])]] as [[PublicKeyCredentialDescriptorJSON]?] {
                for timeout in [nil, 60000] as [Int?] {
                    let options = PublicKeyCredentialRequestOptionsJSON(
                        challenge: Data(repeating: 7, count: 32), timeout: timeout, rpId: text, allowCredentials: allowed, userVerification: text.isEmpty ? nil : text
                    )
                    #expect(Data(options.encodedJSON) == (try Self.reference(options)))
                    let answer = AuthorizationChallengeExchange.InsufficientAuthorization(authSession: "ticket" + text, webauthn: options)
                    #expect(answer.encodedJSON == (try Self.reference(answer)))
                }
            }
            let code = AuthorizationChallengeExchange.AuthorizationCode(authorizationCode: text)
            #expect(code.encodedJSON == (try Self.reference(code)))
        }
    }

    @Test("the redirect flow's answers: started, the challenge with and without its client, completed")
    func redirectFlow() throws {
        for text in Self.texts {
            let started = SignInExchange.Started(authenticateURL: "https://id.example/v1/authenticate/" + text)
            #expect(started.encodedJSON == (try Self.reference(started)))
            for allowed in [nil, [PublicKeyCredentialDescriptorJSON(id: Data([1, 2, 3]), transports: ["usb", text])]] as [[PublicKeyCredentialDescriptorJSON]?] {
                let options = PublicKeyCredentialRequestOptionsJSON(
                    challenge: Data(repeating: 7, count: 32), timeout: 60000, rpId: text, allowCredentials: allowed, userVerification: "preferred"
                )
                for application in [nil, text, "latchkey-cli"] as [String?] {
                    let challenge = SignInExchange.Challenge(publicKey: options, submit: "https://id.example/v1/authenticate/" + text, application: application)
                    #expect(challenge.encodedJSON == (try Self.reference(challenge)), "\(text) \(application ?? "nil")")
                    #expect(try JSONDecoder().decode(SignInExchange.Challenge.self, from: challenge.encodedJSON) == challenge)
                }
            }
            let completed = SignInExchange.Completed(redirectURL: "https://app.example/cb?code=" + text + "&state=%2B")
            #expect(completed.encodedJSON == (try Self.reference(completed)))
        }
    }

    @Test("an SSH certificate's answer")
    func sshCertificate() throws {
        for text in Self.texts {
            for principals in [[], [text], ["ada", text, ""]] {
                let issued = SSHCertificateExchange.Issued(
                    certificate: "ssh-ed25519-cert-v01@openssh.com AAAA" + text, serial: "18446744073709551615", keyID: text, principals: principals,
                    validAfter: "2026-11-27T10:00:00Z", validBefore: text
                )
                #expect(issued.encodedJSON == (try Self.reference(issued)))
            }
        }
    }

    @Test("a JWS's protected header carries its kid and typ escaped and parses back")
    func jwsHeader() throws {
        let key = try SigningKey.generate(.es256)
        for text in Self.texts {
            let compact = try JWS.sign(payload: Data("{}".utf8), with: key, keyID: text, type: "JWT")
            let jws = try JWS(compact: compact)
            #expect(jws.keyID == text)
            #expect(jws.header["typ"]?.stringValue == "JWT")
            try jws.verify(with: key.publicKey)
            let header = try Base64URL.decode(String(compact.split(separator: ".")[0]))
            #expect(header == (try Self.reference(["alg": "ES256", "kid": text, "typ": "JWT"])))
        }
    }
}
