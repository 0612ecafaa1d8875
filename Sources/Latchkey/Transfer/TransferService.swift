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

/// Device linking by code (docs/PROTOCOL.md section 5): the credential's private key never
/// leaves this host; the other host makes its own key, and this host approves it.
struct TransferService: EmbeddedService {
    let core: EmbeddedCore
}

extension TransferService {
    /// The work of `Embedded.exportCredential`, which documents it.
    func exportCredential(id: String) -> AsyncThrowingStream<ExportEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream<ExportEvent, any Error>.makeStream()
        let flow = flow("exportCredential")
        let task = Task {
            do {
                try await flow.run { try await runExport(id: id, flow: flow) { continuation.yield($0) } }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The work of `Embedded.importCredential`, which documents it.
    func importCredential(code: String, deviceName: String, issuer: URL) async throws -> [Credential] {
        let flow = flow("importCredential")
        return try await flow.run {
            guard let transferCode = TransferCode(code) else {
                throw LatchkeyError.invalidTransferCode(reason: "a transfer code is 9 symbols, like 7KQ-4M2-X9A; check what the other device shows")
            }
            let name = deviceName.trimmingWhitespace()
            guard !name.isEmpty, name.count <= 64 else {
                throw LatchkeyError.invalidArgument(reason: "the device name must be 1 to 64 characters")
            }
            let provider = try sessions.provider(issuer)
            let conversation = ProviderConversation(flow: flow, provider: provider, transport: transport)
            // Attestation first: certifying a new attestation key takes round trips that
            // should not eat into the redeemed code's time.
            let protection = credentialStore.protectionForNewKey(flow)
            let signer = try await attestations.attestationSigner(bindingAt: provider, protection: protection, flow: flow)

            let redeemed: ProviderConversation.Reply
            do {
                redeemed = try await conversation.post(provider.url(ProtocolPath.transferRedemption), ImportExchange.Redeem(code: transferCode.displayed))
            } catch let error as LatchkeyError where error.providerError?.error == .invalidCode {
                throw LatchkeyError.invalidTransferCode(reason: "the provider refused the code (\(error.providerError?.errorDescription ?? "invalid code")); use the code the other device shows now",
                    providerError: error.providerError
                )
            }
            let challenge = try redeemed.decode(ImportExchange.Challenge.self, "creation options")
            let submit = try conversation.url(challenge.submit, named: "submit")
            let (registration, created) = try await credentialStore.makeCredential(
                challenge.publicKey, at: provider, protection: protection, attestation: signer
            )
            let credential = Credential(created)
            do {
                let submitted = try await conversation.post(submit, ImportExchange.Submission(registration: registration, deviceName: name))
                let status = try conversation.url(submitted.decode(ImportExchange.Accepted.self, "import answer").status, named: "status")
                let thumbprint = try (try authenticator.vault.entry(credential.handle).publicKey.jwk).thumbprint()
                flow.emit(.importPending(ImportRequest(
                    deviceName: name, fingerprint: ImportRequest.fingerprint(ofThumbprint: thumbprint),
                    thumbprint: thumbprint, credentialID: credential.id
                )))
                flow.logger.debug("import waiting for approval", metadata: ["provider": .string(provider.issuer)])
                while true {
                    try await Task.sleep(for: configuration.transferPollInterval)
                    let outcome = try await conversation.get(status).decode(TransferOutcome.self, "transfer state")
                    switch outcome.state {
                    case .completed:
                        guard outcome.credential?.id == credential.id else {
                            throw LatchkeyError.malformedResponse(reason: "the provider bound a different credential than the one submitted")
                        }
                        let imported = credentialStore.markActive(credential, logger: flow.logger)
                        flow.emit(.credentialRegistered(imported.id))
                        return [imported]
                    case .declined:
                        throw LatchkeyError.transferDeclined(reason: "the other device declined the import; nothing was added")
                    case .cancelled, .expired, .failed:
                        throw LatchkeyError.transferEnded(reason: "the transfer ended (\(outcome.state)) before it was approved; start again with a new code")
                    default:
                        continue
                    }
                }
            } catch {
                _ = try? authenticator.deleteCredential(credential.handle)
                throw error
            }
        }
    }

    // MARK: Export

    private func runExport(id: String, flow: FlowContext, emit: (ExportEvent) -> Void) async throws {
        guard let credential = try credentialStore.storedCredentials().first(where: { $0.id == id }) else {
            throw LatchkeyError.noCredential(reason: "no credential \(id.prefix(12))… in this vault; `credentials()` lists them")
        }
        guard credential.state != .revoked else {
            throw LatchkeyError.credentialRevoked(reason: "this credential was revoked by the provider; it cannot be exported")
        }
        guard let issuer = credential.issuer else {
            throw LatchkeyError.noCredential(reason: "this credential does not record its provider, so it cannot be exported")
        }
        let provider = try sessions.provider(issuer)
        let conversation = ProviderConversation(flow: flow, provider: provider, transport: transport)

        // Prove possession of the credential and get the first code.
        let begun = try await credentialStore.revocationAware(credential) {
            try await conversation.post(provider.url(ProtocolPath.transfers), ExportExchange.Begin(credential: credential.id))
        }.decode(ExportExchange.Challenge.self, "transfer challenge")
        let transferID = try ProviderConversation.bounded(begun.transfer, "transfer", maximumLength: 256)
        let opened = try await credentialStore.revocationAware(credential) {
            let submit = try conversation.url(begun.submit, named: "submit")
            let (assertion, _) = try authenticator.getAssertion(begun.publicKey, origin: provider.origin, credentialID: credential.credentialID)
            return try await conversation.post(submit, response: assertion)
        }.decode(ExportExchange.Opened.self, "transfer code")
        var code = try Self.code(opened.code)
        let status = try conversation.url(opened.status, named: "status")
        let cancel = try conversation.url(opened.cancel, named: "cancel")
        emit(.codeIssued(code, expiresAt: Self.expiry(opened.codeExpiresAt)))
        flow.logger.debug("export waiting for an importer", metadata: ["provider": .string(provider.issuer)])

        var redeemed = false
        do {
            while true {
                try await Task.sleep(for: configuration.transferPollInterval)
                let reply = try await conversation.get(status).decode(ExportExchange.Status.self, "transfer state")
                switch reply.state {
                case .waiting:
                    let current = try Self.code(reply.code)
                    if current != code {
                        code = current
                        emit(.codeRotated(current, expiresAt: Self.expiry(reply.codeExpiresAt)))
                    }
                case .redeemed:
                    if !redeemed { emit(.codeRedeemed) }
                    redeemed = true
                case .importRequested:
                    guard let importer = reply.importer, let options = reply.publicKey, let approve = reply.approve, let decline = reply.decline else {
                        throw LatchkeyError.malformedResponse(reason: "the import request lacks the importer, its options or where to answer")
                    }
                    let (request, expectedChallenge) = try Self.importRequest(importer, transferID: transferID)
                    emit(.importRequested(request))
                    let answer = try await flow.ask(FlowStep(
                        name: .confirmImport,
                        message: "Approve \"\(request.deviceName)\" (key \(request.fingerprint)) to sign in as \(credential.user.name)?",
                        fields: [FlowStep.Field(name: Step.Field.Name.approve.rawValue, required: true, kind: Step.Field.accept.kind)],
                        importRequest: request
                    ))
                    flow.emit(.stepAnswered(.confirmImport))
                    if answer.fields[Step.Field.Name.approve.rawValue] == StepSubmission.yes {
                        guard options.challenge.data == expectedChallenge else {
                            throw LatchkeyError.malformedResponse(reason: "the approval challenge does not bind the importing device's key; nothing was signed")
                        }
                        let (assertion, _) = try authenticator.getAssertion(options, origin: provider.origin, credentialID: credential.credentialID)
                        _ = try await conversation.post(conversation.url(approve, named: "approve"), response: assertion)
                        emit(.completed(request))
                    } else {
                        _ = try await conversation.post(conversation.url(decline, named: "decline"), StepSubmission([:]))
                        emit(.declined(request))
                    }
                    return
                case .cancelled:
                    emit(.cancelled)
                    return
                case .expired:
                    emit(.expired)
                    return
                case .failed:
                    throw LatchkeyError.transferEnded(reason: "too many wrong codes were tried, so the provider closed the transfer; start a new export")
                default:
                    throw LatchkeyError.malformedResponse(reason: "the transfer is in a state this client does not know")
                }
            }
        } catch {
            if error is CancellationError || (error as? LatchkeyError)?.code == .cancelled {
                // This task is cancelled; tell the provider from a task that is not.
                Task { _ = try? await conversation.post(cancel, StepSubmission([:])) }
            } else {
                // Any other failure here (a TPM that stopped answering, a provider error)
                // ends the transfer too, so the importer hears so now rather than waiting
                // for the code to expire.
                _ = try? await conversation.post(cancel, StepSubmission([:]))
            }
            throw error
        }
    }

    private static func code(_ text: String?) throws -> TransferCode {
        guard let text, text.utf8.count <= 32, let code = TransferCode(text) else {
            throw LatchkeyError.malformedResponse(reason: "the provider's transfer code is malformed")
        }
        return code
    }

    private static func expiry(_ seconds: Int?) -> Date {
        Date(timeIntervalSince1970: TimeInterval(seconds ?? 0))
    }

    /// The importer as the provider describes it, checked: the fingerprint is computed
    /// here from the importer's key, and the approval challenge recomputed from it.
    private static func importRequest(_ importer: ExportExchange.Importer, transferID: String) throws -> (request: ImportRequest, expectedChallenge: Data) {
        func malformed(_ what: String) -> LatchkeyError {
            LatchkeyError.malformedResponse(reason: "the import request's \(what) is malformed")
        }
        let deviceName = importer.deviceName
        guard !deviceName.isEmpty, deviceName.count <= 64 else { throw malformed("device name") }
        let idText = importer.credentialID
        guard let credentialID = try? Base64URL.decode(idText), credentialID.count <= 1023 else {
            throw malformed("credential ID")
        }
        let jwk = importer.publicKey
        guard (try? VerifyingKey(jwk: jwk)) != nil, let thumbprint = try? jwk.thumbprint() else { throw malformed("public key") }
        guard let nonce = try? Base64URL.decode(importer.nonce), (16...64).contains(nonce.count) else {
            throw malformed("nonce")
        }
        let challenge = try BoundChallenge.transferApproval(transferID: transferID, credentialID: credentialID, thumbprint: thumbprint, deviceName: deviceName, nonce: nonce)
        // The name as signed over (the challenge binds the provider's bytes), shown safely.
        let request = ImportRequest(
            deviceName: deviceName.displaySafe(maximumLength: 64), fingerprint: ImportRequest.fingerprint(ofThumbprint: thumbprint),
            thumbprint: thumbprint, credentialID: idText
        )
        return (request, challenge)
    }
}
