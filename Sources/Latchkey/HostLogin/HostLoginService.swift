#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import Logging

/// A host asking a person to approve a sign-in to it (docs/PROTOCOL.md section 13): an
/// RFC 8628 device authorization authenticated with the host's client key, carrying the
/// `latchkey_pam_login` authorization detail (RFC 9396) the approver is shown, polled
/// until the person decides, then the ID token checked and the approver's username read.
struct HostLoginService: EmbeddedService {
    let core: EmbeddedCore
}

extension HostLoginService {
    /// How far `auth_time` may be before the request started or after now: clocks differ.
    static let clockSkew: TimeInterval = 60

    /// The work of `Embedded.approveHostLogin`, which documents it.
    func approve(
        issuer: URL, clientID: String, request: HostLoginRequest, events: @escaping @Sendable (DeviceAuthorizationEvent) -> Void
    ) async throws -> HostLoginApproval {
        let flow = flow("approveHostLogin")
        return try await flow.run {
            let provider = try sessions.provider(issuer)
            guard try clientKeys.existingClientKey(issuer: provider.base, clientID: clientID) != nil else {
                throw LatchkeyError.clientKeyMissing(reason: "no client key for \(clientID) at \(provider.issuer): this host is not enrolled (latchkey pam enroll)")
            }
            let detail = PAMLoginDetail(service: request.service, user: request.user, remoteHost: request.remoteHost, tty: request.tty)
            if let problem = detail.problem { throw LatchkeyError.invalidArgument(reason: "the sign-in to approve: \(problem)") }
            let client = try deviceGrant.deviceGrantClient(provider, clientID: clientID)
            let started = Date()
            let authorization = try await client.deviceAuthorization(scopes: [OAuthScope.openID], authorizationDetails: try detail.parameter())
            events(.code(DeviceCodePrompt(
                userCode: authorization.userCode, verificationURI: authorization.verificationURI,
                verificationURIComplete: authorization.verificationURIComplete,
                expiresAt: started.addingTimeInterval(TimeInterval(authorization.expiresIn)),
                interval: authorization.interval ?? DeviceAuthorizationResponse.defaultInterval
            )))
            let tokens = try await client.deviceTokens(for: authorization, issuedAt: started) { outcome, polling in
                events(outcome == .pending ? .pending : .slowDown(interval: polling.interval))
            }
            // The ID token was validated as every one is (issuer, audience, signature,
            // expiry); RFC 8628 has no nonce, so auth_time is what ties it to this request.
            guard let claims = tokens.idTokenClaims, let authTime = claims.authTime else {
                throw LatchkeyError.malformedResponse(reason: "the provider's answer has no ID token with auth_time; it cannot vouch for who approved")
            }
            guard authTime >= started.addingTimeInterval(-Self.clockSkew), authTime <= Date().addingTimeInterval(Self.clockSkew) else {
                throw LatchkeyError.malformedResponse(reason: "the ID token's auth_time is not from this approval")
            }
            let info = try await client.userInfo(accessToken: tokens.accessToken, expectedSubject: claims.subject)
            guard let username = UserInfoClaims(info).preferredUsername, !username.isEmpty, username.utf8.count <= 256 else {
                throw LatchkeyError.malformedResponse(reason: "the provider's userinfo names no preferred_username for the approver")
            }
            // The host needed the approval once: the person's token is not kept.
            do {
                try await client.revoke(tokens.accessToken, hint: .accessToken)
            } catch {
                flow.logger.warning("the approval's access token was not revoked", metadata: [LogField.error.rawValue: .string(String(describing: error))])
            }
            return HostLoginApproval(subject: claims.subject, username: username, approvedAt: authTime)
        }
    }
}
