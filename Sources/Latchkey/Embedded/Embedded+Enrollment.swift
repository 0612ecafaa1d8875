public import Foundation
import LatchkeyOAuth
import LatchkeyProtocol

/// Self-service sign-up and account recovery, passwordless (docs/PROTOCOL.md section 6):
/// policy steps first (`enroll-profile`, `verify-code`), then a bind URL that ends in a
/// new credential in this vault.
extension Embedded {
    /// Signs up at `issuer` as `username`: the provider's `enroll-profile` step is
    /// answered from `profile` (the step handler is asked only for required fields that
    /// are missing), its `verify-code` step by the step handler (the code went to the
    /// e-mail address given), and the resulting bind link is followed. Returns the new
    /// credential; sign in with it right away.
    public func signUp(issuer: URL, username: String, profile: [ProfileField: String] = [:]) async throws -> Credential {
        let flow = flow("signUp")
        return try await flow.run {
            let known = Dictionary(uniqueKeysWithValues: profile.map { ($0.key.name, $0.value) })
            return try await enroll(flow, at: issuer, path: ProtocolPath.signUp, username: username, known: known).0
        }
    }

    /// Recovers `username`'s account at `issuer` after losing every device: the provider
    /// sends a code to the account's e-mail (the step handler's `verify-code` answers it)
    /// and answers a recovery bind link. Binding through it revokes the account's other
    /// credentials; those in this vault are marked revoked. Returns the new credential.
    public func recover(issuer: URL, username: String) async throws -> Credential {
        let flow = flow("recover")
        return try await flow.run {
            let (credential, provider) = try await enroll(flow, at: issuer, path: ProtocolPath.recovery, username: username, known: [:])
            for old in try storedCredentials() where old.id != credential.id && old.user.id == credential.user.id && old.belongs(to: provider) {
                markRevoked(old)
            }
            return credential
        }
    }

    /// Start → steps → bind URL on the same provider → bind.
    private func enroll(_ flow: FlowContext, at issuer: URL, path: String, username: String, known: [String: String]) async throws -> (Credential, ProviderAddress) {
        let provider = try sessions.provider(issuer)
        let name = username.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.utf8.count <= 256 else {
            throw LatchkeyError.invalidArgument(reason: "the username must be 1 to 256 characters")
        }
        let conversation = ProviderConversation(flow: flow, provider: provider, transport: transport)
        let started = try await conversation.post(provider.url(path), EnrollmentExchange.Start(username: name))
        let finished = try await conversation.settle(started, known: known)
        let bindURL = try finished.decode(EnrollmentExchange.Finished.self, "bind link").bindURL
        guard let link = try ProviderLink.parse(conversation.url(bindURL, named: "bindURL"), as: .bind) else {
            throw LatchkeyError.malformedResponse(reason: "the provider's bindURL is not a bind URL")
        }
        return (try await bind(link, conversation: conversation).credential, provider)
    }
}
