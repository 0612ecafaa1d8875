import Foundation
import LatchkeyCrypto
import LatchkeyOAuth

/// PKCE, JWS, ID-token validation and DPoP proofs, each next to the bare primitive it is built on,
/// measured in the same run: a `RAND_bytes` + SHA-256 pair for PKCE, and the bare ES256
/// signature and verification for JWS and ID tokens.
struct OAuthBenchmark {
    var seconds: Double

    func run() throws -> Report {
        let pkce = try measureThroughput(seconds: seconds / 2) { _ = try PKCE.generate() }
        let bare = try measureThroughput(seconds: seconds / 2) {
            _ = try DigestAlgorithm.sha256.hash(SecureRandom.bytes(count: 32))
        }

        let key = try SigningKey.generate(.es256)
        let now = Date().timeIntervalSince1970
        let claims: [String: Any] = ["iss": "https://id.example.com", "sub": "user", "aud": "client", "iat": now, "exp": now + 3600, "nonce": "n"]
        let payload = try JSONSerialization.data(withJSONObject: claims)
        let token = try JWS.sign(payload: payload, with: key, keyID: "k")
        let sign = try measureThroughput(seconds: seconds / 2) { _ = try JWS.sign(payload: payload, with: key, keyID: "k") }
        let verify = try measureThroughput(seconds: seconds / 2) { try JWS(compact: token).verify(with: key.publicKey) }
        let message = Data(token.split(separator: ".").prefix(2).joined(separator: ".").utf8)
        let signature = try key.signature(for: message)
        let bareSign = try measureThroughput(seconds: seconds / 2) { _ = try key.signature(for: message) }
        let bareVerify = measureThroughput(seconds: seconds / 2) { _ = key.publicKey.isValidSignature(signature, for: message) }

        let validator = IDTokenValidator(issuer: "https://id.example.com", clientID: "client")
        let publicKey = key.publicKey
        let keys = JWKSet(keys: [.init(keyID: "k", algorithm: "ES256", verifyingKey: publicKey)])
        let validations = try measureThroughput(seconds: seconds / 2) {
            _ = try validator.validate(token, expectations: .init(nonce: "n"), keys: keys)
        }

        // DPoP (RFC 9449): a proof for a resource request (with ath) and its full §4.3
        // check, next to the bare ES256 signature and verification they are built on.
        let resource = URL(string: "https://id.example.com/userinfo")!
        let proof = try DPoPProof.make(method: "GET", url: resource, key: key, accessToken: "access-token")
        let verifier = DPoPProofVerifier()
        let signer = try DPoPSigner(key: key)
        let proofs = try measureThroughput(seconds: seconds / 2) {
            _ = try signer.headers(method: "GET", url: resource, accessToken: "access-token")
        }
        let proofChecks = try measureThroughput(seconds: seconds / 2) {
            _ = try verifier.verify([proof], method: "GET", url: resource, accessToken: "access-token")
        }

        var report = Report(title: "OAuth (PKCE, JOSE, ID tokens, DPoP)")
        report.lines = [
            ReportLine(name: "PKCE pair", latchkey: pkce, reference: bare, referenceName: "RAND_bytes(32) + SHA-256"),
            ReportLine(name: "JWS ES256 sign", latchkey: sign, reference: bareSign, referenceName: "bare ES256 signature"),
            ReportLine(name: "JWS ES256 verify", latchkey: verify, reference: bareVerify, referenceName: "bare ES256 verification"),
            ReportLine(name: "ID token validation", latchkey: validations, reference: bareVerify, referenceName: "bare ES256 verification"),
            ReportLine(name: "DPoP proof creation", latchkey: proofs, reference: bareSign, referenceName: "bare ES256 signature", target: .ratioAtLeast(0.7)),
            ReportLine(name: "DPoP proof verification", latchkey: proofChecks, reference: bareVerify, referenceName: "bare ES256 verification", target: .ratioAtLeast(0.8)),
        ]
        return report
    }
}
