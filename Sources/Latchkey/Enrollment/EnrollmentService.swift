#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

/// Self-service sign-up and account recovery, passwordless (docs/PROTOCOL.md section 6):
/// policy steps first (`enroll-profile`, `verify-code`), then a bind URL that ends in a
/// new credential in this vault.
struct EnrollmentService: EmbeddedService {
    let core: EmbeddedCore
}

extension EnrollmentService {
    /// The work of `Embedded.signUp`, which documents it.
    func signUp(issuer: URL, username: String, profile: [ProfileField: String] = [:]) async throws -> Credential {
        let flow = flow("signUp")
        return try await flow.run {
            let known = Dictionary(uniqueKeysWithValues: profile.map { ($0.key.name, $0.value) })
            return try await enroll(flow, at: issuer, path: ProtocolPath.signUp, username: username, known: known).0
        }
    }

    /// The work of `Embedded.recover`, which documents it.
    func recover(issuer: URL, username: String) async throws -> Credential {
        let flow = flow("recover")
        return try await flow.run {
            let (credential, provider) = try await enroll(flow, at: issuer, path: ProtocolPath.recovery, username: username, known: [:])
            for old in try credentialStore.storedCredentials() where old.id != credential.id && old.user.id == credential.user.id && old.belongs(to: provider) {
                credentialStore.markRevoked(old)
            }
            return credential
        }
    }

    /// Start → steps → bind URL on the same provider → bind.
    private func enroll(_ flow: FlowContext, at issuer: URL, path: String, username: String, known: [String: String]) async throws -> (Credential, ProviderAddress) {
        let provider = try sessions.provider(issuer)
        let name = username.trimmingSpaces()
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
        return (try await credentialStore.bind(link, conversation: conversation).credential, provider)
    }
}
