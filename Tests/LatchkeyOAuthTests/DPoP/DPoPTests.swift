import Foundation
import LatchkeyCrypto
@testable import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// DPoP proofs (RFC 9449): the RFC's examples, our own proofs, and every refusal of
/// §4.3 by name.
@Suite("DPoP proofs (RFC 9449)")
struct DPoPTests {
    static let url = URL(string: "https://id.example.com/token")!
    static let verifier = DPoPProofVerifier()

    /// A proof with any header and claims, signed by `key` (for the hostile cases).
    static func forged(header: JSONValue, claims: JSONValue, key: SigningKey) throws -> String {
        let input = Base64URL.encode(try header.json()) + "." + Base64URL.encode(try claims.json())
        var signature = try key.signature(for: Data(input.utf8))
        if key.algorithm == .es256 { signature = try ECDSASignature(derRepresentation: signature).rawRepresentation }
        return input + "." + Base64URL.encode(signature)
    }

    /// `object` with member `name` set to `value` (removed for nil).
    static func replacing(_ object: JSONValue, _ name: String, _ value: JSONValue?) -> JSONValue {
        var changed = object
        changed[name] = value
        return changed
    }

    static func publicJWK(_ key: SigningKey) throws -> JSONValue {
        try JSONValue(json: JSONEncoder().encode(key.publicKey.jwk))
    }

    static func claims(_ changes: [String: JSONValue?] = [:], now: Date = Date()) -> JSONValue {
        var claims: JSONValue = ["jti": "0123456789abcdefghij", "htm": "POST", "htu": .string(url.absoluteString), "iat": .number(Double(Int(now.timeIntervalSince1970)))]
        for (name, value) in changes { claims[name] = value }
        return claims
    }

    @Test("RFC 9449 §5 and §7.1: the example proofs verify, with the example jkt and ath")
    func rfcExamples() throws {
        let file = try JOSEVectorTests.vector("rfc9449-dpop.json")
        let token = try #require(file["tokenRequest"])
        let iat = try #require(token["iat"]?.numberValue)
        let verified = try Self.verifier.verify(
            [try #require(token["proof"]?.stringValue)], method: try #require(token["method"]?.stringValue),
            url: URL(string: try #require(token["url"]?.stringValue))!, now: Date(timeIntervalSince1970: iat + 4)
        )
        #expect(verified.thumbprint == token["jkt"]?.stringValue && verified.jti == token["jti"]?.stringValue && verified.algorithm == .es256)

        let resource = try #require(file["resourceRequest"])
        let accessToken = try #require(resource["accessToken"]?.stringValue)
        #expect(try DPoPProof.accessTokenHash(accessToken) == resource["ath"]?.stringValue)
        let proof = try #require(resource["proof"]?.stringValue)
        let resourceURL = URL(string: try #require(resource["url"]?.stringValue))!
        let at = Date(timeIntervalSince1970: try #require(resource["iat"]?.numberValue) + 2)
        let bound = try Self.verifier.verify([proof], method: "GET", url: resourceURL, accessToken: accessToken, now: at)
        #expect(bound.thumbprint == token["jkt"]?.stringValue)
        let other = #expect(throws: OAuthError.self) { try Self.verifier.verify([proof], method: "GET", url: resourceURL, accessToken: "another token", now: at) }
        #expect(other?.code == .invalidDPoPProof && other?.reason.contains("ath") == true)
    }

    @Test("our proofs: ES256 and EdDSA, public jwk only, 128-bit jti, htu without query or fragment, ath and nonce")
    func ourProofs() throws {
        for algorithm in [SigningAlgorithm.es256, .ed25519] {
            let key = try SigningKey.generate(algorithm)
            let target = URL(string: "https://ID.example.com:443/userinfo?x=1#top")!
            let proof = try DPoPProof.make(method: "GET", url: target, key: key, accessToken: "at", nonce: "n-1")
            let jws = try JWS(compact: proof)
            #expect(jws.header["typ"]?.stringValue == "dpop+jwt")
            guard case .object(let jwk)? = jws.header["jwk"] else { throw TestSupportError("no jwk") }
            #expect(Set(jwk.keys).isSubset(of: ["kty", "crv", "x", "y"]))
            let claims = try JSONDecoder().decode([String: JSONValue].self, from: jws.payload)
            #expect(claims["htu"]?.stringValue == "https://id.example.com/userinfo")
            #expect(try Base64URL.decode(try #require(claims["jti"]?.stringValue)).count == 16)
            let ath = try DPoPProof.accessTokenHash("at")
            #expect(claims["nonce"]?.stringValue == "n-1" && claims["ath"]?.stringValue == ath)
            let verified = try Self.verifier.verify(
                [proof], method: "GET", url: URL(string: "https://id.example.com/userinfo")!, accessToken: "at", nonceIsValid: { $0 == "n-1" }
            )
            let thumbprint = try key.publicKey.jwk.thumbprint()
            #expect(verified.thumbprint == thumbprint)
        }
    }

    @Test("a signer's proofs: each URL's own htu over more URLs than its table keeps, and an origin's nonce on every path there, never on another origin")
    func signerTargets() throws {
        let signer = try DPoPSigner(key: try SigningKey.generate(.es256))
        let origin = "https://as.example.com"
        signer.remember(nonce: "n-7", from: URL(string: "\(origin)/token")!)
        func claims(_ url: String) throws -> [String: JSONValue] {
            let proof = try #require(try signer.headers(method: "POST", url: URL(string: url)!)[DPoPProof.headerName])
            return try JSONDecoder().decode([String: JSONValue].self, from: try JWS(compact: proof).payload)
        }
        // Round after round over more URLs than the table holds, so it fills and starts again.
        for round in 0..<3 {
            for index in 0..<(DPoPSigner.maximumTargets + 5) {
                let path = "/endpoint/\(index)"
                let here = try claims("\(origin)\(path)?round=\(round)")
                #expect(here["htu"]?.stringValue == "\(origin)\(path)", "round \(round), URL \(index)")
                #expect(here["nonce"]?.stringValue == "n-7", "round \(round), URL \(index)")
                let elsewhere = try claims("https://rs.example.com\(path)")
                #expect(elsewhere["htu"]?.stringValue == "https://rs.example.com\(path)" && elsewhere["nonce"] == nil, "round \(round), URL \(index)")
            }
        }
        // A nonce learnt after a URL's target was kept is on the next proof to it.
        signer.remember(nonce: "n-8", from: URL(string: "https://rs.example.com/endpoint/0")!)
        #expect(try claims("https://rs.example.com/endpoint/0")["nonce"]?.stringValue == "n-8")
        #expect(try claims("\(origin)/endpoint/0?round=0")["nonce"]?.stringValue == "n-7")
    }
    @Test("hostile proofs are refused, each by name", arguments: [
        "wrong htm", "wrong htu", "stale iat", "future iat", "private key in jwk", "alg none", "alg HS256", "alg RS256",
        "typ JWT", "no jwk", "jwk of another key", "proof for another token (ath)", "no ath with a token", "short jti",
        "two DPoP headers", "no DPoP header", "oversized", "htu with user info", "relative htu", "iat not a number", "duplicate claim", "nested claim",
    ])
    func hostile(_ name: String) throws {
        let key = try SigningKey.generate(.es256)
        let jwk = try Self.publicJWK(key)
        let header: JSONValue = ["typ": "dpop+jwt", "alg": "ES256", "jwk": jwk]
        func forged(_ header: JSONValue, _ claims: JSONValue) throws -> [String] { [try Self.forged(header: header, claims: claims, key: key)] }
        var accessToken: String?
        let proofs: [String]
        switch name {
        case "wrong htm": proofs = [try DPoPProof.make(method: "GET", url: Self.url, key: key)]
        case "wrong htu": proofs = [try DPoPProof.make(method: "POST", url: URL(string: "https://id.example.com/revoke")!, key: key)]
        case "stale iat": proofs = [try DPoPProof.make(method: "POST", url: Self.url, key: key, issuedAt: Date().addingTimeInterval(-301))]
        case "future iat": proofs = [try DPoPProof.make(method: "POST", url: Self.url, key: key, issuedAt: Date().addingTimeInterval(120))]
        case "private key in jwk":
            var withPrivate = jwk
            withPrivate["d"] = .string(Base64URL.encode(Data(count: 32)))
            proofs = try forged(Self.replacing(header, "jwk", withPrivate), Self.claims())
        case "alg none": proofs = [Base64URL.encode(Data("{\"typ\":\"dpop+jwt\",\"alg\":\"none\"}".utf8)) + "." + Base64URL.encode(try Self.claims().json()) + "."]
        case "alg HS256": proofs = try forged(Self.replacing(header, "alg", "HS256"), Self.claims())
        case "alg RS256": proofs = try forged(Self.replacing(header, "alg", "RS256"), Self.claims())
        case "typ JWT": proofs = try forged(Self.replacing(header, "typ", "JWT"), Self.claims())
        case "no jwk": proofs = try forged(Self.replacing(header, "jwk", nil), Self.claims())
        case "jwk of another key": proofs = try forged(Self.replacing(header, "jwk", try Self.publicJWK(SigningKey.generate(.es256))), Self.claims())
        case "proof for another token (ath)":
            accessToken = "the presented token"
            proofs = [try DPoPProof.make(method: "POST", url: Self.url, key: key, accessToken: "a different token")]
        case "no ath with a token":
            accessToken = "the presented token"
            proofs = [try DPoPProof.make(method: "POST", url: Self.url, key: key)]
        case "short jti": proofs = try forged(header, Self.claims(["jti": "abc"]))
        case "two DPoP headers":
            let one = try DPoPProof.make(method: "POST", url: Self.url, key: key)
            proofs = [one, one]
        case "no DPoP header": proofs = []
        case "oversized": proofs = try forged(header, Self.claims(["pad": .string(String(repeating: "a", count: 9000))]))
        case "htu with user info": proofs = try forged(header, Self.claims(["htu": "https://user@id.example.com/token"]))
        case "relative htu": proofs = try forged(header, Self.claims(["htu": "/token"]))
        case "iat not a number": proofs = try forged(header, Self.claims(["iat": "now"]))
        case "duplicate claim", "nested claim":
            // Two htm (the first one matching) or an object among the claims: refused
            // whole, never read one way here and another elsewhere.
            let extra = name == "duplicate claim" ? "\"htm\":\"GET\"" : "\"cnf\":{\"jkt\":\"x\"}"
            let text = "{\"jti\":\"0123456789abcdefghij\",\"htm\":\"POST\",\"htu\":\"\(Self.url.absoluteString)\",\"iat\":\(Int(Date().timeIntervalSince1970)),\(extra)}"
            let input = Base64URL.encode(try header.json()) + "." + Base64URL.encode(Data(text.utf8))
            let signature = try ECDSASignature(derRepresentation: key.signature(for: Data(input.utf8))).rawRepresentation
            proofs = [input + "." + Base64URL.encode(signature)]
        default: throw TestSupportError("no case \(name)")
        }
        let error = #expect(throws: OAuthError.self, "\(name)") {
            try Self.verifier.verify(proofs, method: "POST", url: Self.url, accessToken: accessToken)
        }
        #expect(error?.code == .invalidDPoPProof, "\(name): \(String(describing: error))")
    }

    @Test("a required nonce: missing or unknown is use_dpop_nonce, the current one passes")
    func nonces() throws {
        let key = try SigningKey.generate(.ed25519)
        let check: (String) -> Bool = { $0 == "current" }
        for nonce in [nil, "stale"] {
            let proof = try DPoPProof.make(method: "POST", url: Self.url, key: key, nonce: nonce)
            let error = #expect(throws: OAuthError.self) { try Self.verifier.verify([proof], method: "POST", url: Self.url, nonceIsValid: check) }
            #expect(error?.code == .useDPoPNonce, "\(String(describing: nonce))")
        }
        let proof = try DPoPProof.make(method: "POST", url: Self.url, key: key, nonce: "current")
        _ = try Self.verifier.verify([proof], method: "POST", url: Self.url, nonceIsValid: check)
    }

    @Test("htu comparison ignores what RFC 3986 §6.2 says does not change a URI, and nothing else")
    func targets() throws {
        let same = [
            ("HTTPS://ID.Example.COM:443/token", "https://id.example.com/token"),
            ("https://id.example.com/a/./b/../token", "https://id.example.com/a/token"),
            ("https://id.example.com/%7Euser/%2f", "https://id.example.com/~user/%2F"),
            ("https://id.example.com", "https://id.example.com/"),
            ("http://127.0.0.1:80/x?q#f", "http://127.0.0.1/x"),
        ]
        for (left, right) in same {
            #expect(try DPoPTarget(left) == DPoPTarget(right), "\(left) ~ \(right)")
        }
        let different = [
            ("https://id.example.com/token", "http://id.example.com/token"),
            ("https://id.example.com/token", "https://id.example.com:8443/token"),
            ("https://id.example.com/token", "https://id.example.com/Token"),
            ("https://id.example.com/token", "https://other.example.com/token"),
        ]
        for (left, right) in different {
            #expect(try DPoPTarget(left) != DPoPTarget(right), "\(left) vs \(right)")
        }
        for bad in ["https://id.example.com/%zz", "ftp://id.example.com/", "https://u:p@id.example.com/", "token"] {
            #expect(throws: OAuthError.self, "\(bad)") { try DPoPTarget(bad) }
        }
    }

    @Test(
        "our proofs verify with an independent JOSE implementation (joserfc)",
        .requires("skipped: python3 has no joserfc (.ci/run installs it)") { await PythonInterop.available(["joserfc"]) }
    )
    func interop() async throws {
        var cases: [[String: String]] = []
        for algorithm in [SigningAlgorithm.es256, .ed25519, .es256] {
            let key = try SigningKey.generate(algorithm)
            let url = URL(string: "https://id.example.com/userinfo?page=2#top")!
            let token = algorithm == .ed25519 ? nil : "access-token-\(cases.count)"
            let proof = try DPoPProof.make(method: "GET", url: url, key: key, accessToken: token, nonce: "n")
            var entry = ["proof": proof, "method": "GET", "htu": "https://id.example.com/userinfo", "jkt": try key.publicKey.jwk.thumbprint(), "alg": algorithm.joseName]
            entry["accessToken"] = token
            cases.append(entry)
        }
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("dpop-cases.json")
        try JSONEncoder().encode(cases).write(to: file)
        let (status, output) = try await PythonInterop.run("dpop_interop.py", [file.path])
        #expect(status == 0, "\(output)")
        #expect(output.components(separatedBy: ": ok").count - 1 == cases.count, "\(output)")
    }
}
