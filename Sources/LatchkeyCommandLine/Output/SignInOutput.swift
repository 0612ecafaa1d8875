#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyOAuth

/// `authorize --json`: what a back end needs to exchange the code (RFC 6749 §4.1.3).
struct AuthorizationOutput: Encodable {
    var code: String
    var state: String
    var codeVerifier: String
    var redirectURI: String
    var nonce: String

    init(_ result: AuthorizationResult) {
        code = result.code
        state = result.state
        codeVerifier = result.codeVerifier
        redirectURI = result.redirectURI.absoluteString
        nonce = result.nonce
    }
}

/// `authenticate <url> --json`: the redirect carrying the code.
struct RedirectOutput: Encodable {
    var redirectURL: String
}

/// `authenticate --issuer … --json`: the tokens and the validated ID token's claims.
struct TokensOutput: Encodable {
    var accessToken: String
    var tokenType: String
    var idToken: String?
    var refreshToken: String?
    var expiresAt: String?
    var claims: [String: JSONValue]?

    init(_ tokens: Tokens) {
        accessToken = tokens.accessToken
        tokenType = tokens.tokenSet.tokenType
        idToken = tokens.idToken
        refreshToken = tokens.refreshToken
        expiresAt = tokens.expiresAt.map { $0.formatted(.iso8601) }
        claims = tokens.claims?.all
    }
}

/// `api --json`: the response, its body as JSON when it is JSON, else as text, else base64.
struct APIResponseOutput: Encodable {
    var status: Int
    var headers: [String: String]
    var body: JSONValue?
    var bodyBase64: String?

    init(_ response: TransportResponse) {
        status = response.status
        headers = response.headers
        if let json = try? JSONDecoder().decode(JSONValue.self, from: response.body) {
            body = json
        } else if let text = String(data: response.body, encoding: .utf8) {
            body = .string(text)
        } else {
            bodyBase64 = response.body.base64EncodedString()
        }
    }
}

/// `logout --json`.
struct LogoutOutput: Encodable {
    var forgotten: Int
    var revocationFailures: [String]
}
