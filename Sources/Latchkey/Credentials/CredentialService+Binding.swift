#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn
import Logging

extension CredentialService {
    /// The work of `Embedded.registerCredential`, which documents it.
    func registerCredential(from url: URL, confirm: (@Sendable (BindRequest) async -> Bool)? = nil) async throws -> BoundCredential {
        let flow = flow("registerCredential")
        return try await flow.run {
            let (link, conversation) = try sessions.conversation(following: url, as: .bind, flow: flow)
            return try await bind(link, conversation: conversation, confirm: confirm)
        }
    }

    /// A new credential for `options` from `provider`, pending until the provider answers
    /// (a process killed in between leaves a key that says so, not a bound credential). A
    /// TPM key is made, and attested, on a thread of its own (``BlockingWork``).
    func makeCredential(
        _ options: PublicKeyCredentialCreationOptionsJSON, at provider: ProviderAddress, protection: KeyProtection, attestation signer: TPMAttestationSigner?
    ) async throws -> (response: RegistrationResponseJSON, credential: SoftwareAuthenticator.Credential) {
        let authenticator = authenticator
        let make = { @Sendable in
            try authenticator.makeCredential(
                options, origin: provider.origin, attributes: Credential.newAttributes(issuer: provider, attested: signer != nil),
                protection: protection, attestation: signer
            )
        }
        return protection == .tpm ? try await BlockingWork.run(make) : try make()
    }

    /// The bind protocol for a parsed, allowed link.
    func bind(_ link: ProviderLink, conversation: ProviderConversation, confirm: (@Sendable (BindRequest) async -> Bool)? = nil) async throws -> BoundCredential {
        let flow = conversation.flow
        flow.logger.debug("binding", metadata: ["provider": .string(link.provider.issuer)])
        let job = try await conversation.settle(conversation.get(link.endpoint))
        let challenge = try job.decode(BindExchange.Challenge.self, "creation options")
        let options = challenge.publicKey
        let submit = try conversation.url(challenge.submit, named: "submit")
        if let confirm {
            let request = BindRequest(
                provider: link.provider.base, relyingPartyID: options.rp.id ?? link.provider.host, relyingPartyName: options.rp.name,
                userName: options.user.name, userDisplayName: options.user.displayName
            )
            guard await confirm(request) else {
                throw LatchkeyError.cancelled(reason: "the bind was declined; no key was made and the link was not used")
            }
        }
        let protection = protectionForNewKey(flow)
        let signer = try await attestations.attestationSigner(bindingAt: link.provider, protection: protection, flow: flow)
        let (registration, created) = try await makeCredential(
            options, at: link.provider, protection: protection, attestation: signer
        )
        let credential = Credential(created)
        let redirect: URL?
        do {
            let reply = try await conversation.settle(conversation.post(submit, response: registration))
            let result = try reply.decode(BindExchange.Result.self, "bind confirmation")
            guard result.credential.id == credential.id else {
                throw LatchkeyError.malformedResponse(reason: "the provider confirmed a different credential than the one submitted")
            }
            redirect = try result.postBindingRedirectURI.map { text -> URL in
                guard text.utf8.count <= ProviderAddress.maximumURLLength, let url = URL(string: text), url.scheme != nil else {
                    throw LatchkeyError.malformedResponse(reason: "postBindingRedirectURI is not a URL")
                }
                return url
            }
        } catch {
            // Nothing half-bound stays in the vault.
            _ = try? authenticator.deleteCredential(credential.handle)
            throw error
        }
        let bound = markActive(credential, logger: flow.logger)
        flow.emit(.credentialRegistered(bound.id))
        flow.logger.debug("bound", metadata: ["credentialID": .string(String(bound.id.prefix(8)))])
        return BoundCredential(credential: bound, postBindingRedirectURI: redirect)
    }
}
