public import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn
import Logging

extension Embedded {
    /// Binds a new credential from a bind URL (docs/PROTOCOL.md section 2), in either
    /// form: `https://<idp>/v1/bind/<job>?token=<t>` or the deep link
    /// `<scheme>://bind?api_base_url=<idp>&job_id=<job>&token=<t>`.
    ///
    /// Fetches the job (answering any steps, such as `verify-code`, through the step
    /// handler), creates a key pair in the vault for the creation options (WebAuthn §5.1.3
    /// client steps: RP ID checked against the provider's origin), and submits the
    /// registration. If the provider refuses it, the new key is deleted again, so a failed
    /// bind leaves nothing behind.
    ///
    /// Errors: ``LatchkeyError/Code/notABindURL``, ``LatchkeyError/Code/domainNotAllowed``
    /// (before any request), ``LatchkeyError/Code/providerError`` (expired or used link,
    /// wrong codes), ``LatchkeyError/Code/stepUnsupported``, ``LatchkeyError/Code/vault``.
    public func registerCredential(from url: URL) async throws -> BoundCredential {
        let flow = flow("registerCredential")
        return try await flow.run {
            let (link, conversation) = try conversation(following: url, as: .bind, flow: flow)
            return try await bind(link, conversation: conversation)
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
    func bind(_ link: ProviderLink, conversation: ProviderConversation) async throws -> BoundCredential {
        let flow = conversation.flow
        flow.logger.debug("binding", metadata: ["provider": .string(link.provider.issuer)])
        let job = try await conversation.settle(conversation.get(link.endpoint))
        let challenge = try job.decode(BindExchange.Challenge.self, "creation options")
        let options = challenge.publicKey
        let submit = try conversation.url(challenge.submit, named: "submit")
        let protection = protectionForNewKey(flow)
        let signer = try await attestationSigner(bindingAt: link.provider, protection: protection, flow: flow)
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
