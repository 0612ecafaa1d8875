public import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyWebAuthn

/// Device linking by code (docs/PROTOCOL.md section 5): the credential's private key never
/// leaves this host; the other host makes its own key, and this host approves it.
extension Embedded {
    /// Exports credential `id` to another device. The stream reports the code (and each
    /// rotation of it), the importing device when one asks, and the outcome. Approval is
    /// the step handler's answer to `confirm-import`, given the device name and key
    /// fingerprint; the approval is an assertion whose challenge binds that exact key.
    ///
    /// Stopping the iteration (or cancelling its task) cancels the transfer at the provider.
    /// Errors end the stream as ``LatchkeyError``s.
    public func exportCredential(id: String) -> AsyncThrowingStream<ExportEvent, any Error> {
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

    /// Imports a credential with a code shown by the exporting device: redeems the code at
    /// `issuer`, creates a new key in this vault for the same identity, submits it with
    /// `deviceName`, and waits for the exporter's approval. Returns the new credential(s).
    /// A declined, expired or cancelled transfer deletes the new key again.
    public func importCredential(code: String, deviceName: String, issuer: URL) async throws -> [Credential] {
        let flow = flow("importCredential")
        return try await flow.run {
            guard let transferCode = TransferCode(code) else {
                throw LatchkeyError(code: .invalidTransferCode, reason: "a transfer code is 9 symbols, like 7KQ-4M2-X9A; check what the other device shows")
            }
            let name = deviceName.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty, name.count <= 64 else {
                throw LatchkeyError(code: .invalidArgument, reason: "the device name must be 1 to 64 characters")
            }
            let provider = try ProviderAddress(issuer)
            try allowedDomains.check(provider)
            let conversation = ProviderConversation(flow: flow, provider: provider, transport: configuration.transport)

            let redeemed: ProviderConversation.Reply
            do {
                redeemed = try await conversation.post(provider.url("v1/transfers/redeem"), json: JSONEncoder().encode(["code": transferCode.displayed]))
            } catch let error as LatchkeyError where error.providerError?.error == "invalid_code" {
                throw LatchkeyError(
                    code: .invalidTransferCode,
                    reason: "the provider refused the code (\(error.providerError?.errorDescription ?? "invalid code")); use the code the other device shows now",
                    providerError: error.providerError
                )
            }
            let options = try redeemed.creationOptions()
            let submit = try conversation.url(redeemed.string("submit"), named: "submit")
            let (registration, created) = try authenticator.makeCredential(
                options, origin: provider.origin,
                attributes: [Credential.Attribute.issuer: provider.issuer, Credential.Attribute.state: Credential.State.pending.rawValue]
            )
            let credential = Credential(created)
            do {
                var body = try JSONSerialization.jsonObject(with: registration.json()) as? [String: Any] ?? [:]
                body = ["registration": body, "deviceName": name]
                let submitted = try await conversation.post(submit, json: JSONSerialization.data(withJSONObject: body))
                let status = try conversation.url(submitted.string("status"), named: "status")
                let thumbprint = try (try authenticator.vault.entry(credential.handle).publicKey.jwk).thumbprint()
                flow.emit(.importPending(ImportRequest(
                    deviceName: name, fingerprint: ImportRequest.fingerprint(ofThumbprint: thumbprint),
                    thumbprint: thumbprint, credentialID: credential.id
                )))
                flow.logger.debug("import waiting for approval", metadata: ["provider": .string(provider.issuer)])
                while true {
                    try await Task.sleep(for: configuration.transferPollInterval)
                    let reply = try await conversation.get(status)
                    switch try reply.string("state", maximumLength: 32) {
                    case "completed":
                        guard reply.object["credential"]?.objectValue?["id"]?.stringValue == credential.id else {
                            throw LatchkeyError(code: .malformedResponse, reason: "the provider bound a different credential than the one submitted")
                        }
                        let imported = markActive(credential, logger: flow.logger)
                        flow.emit(.credentialRegistered(imported.id))
                        return [imported]
                    case "declined":
                        throw LatchkeyError(code: .transferDeclined, reason: "the other device declined the import; nothing was added")
                    case "cancelled", "expired", "failed":
                        throw LatchkeyError(code: .transferEnded, reason: "the transfer ended (\(reply.object["state"]?.stringValue ?? "")) before it was approved; start again with a new code")
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
        guard let credential = try storedCredentials().first(where: { $0.id == id }) else {
            throw LatchkeyError(code: .noCredential, reason: "no credential \(id.prefix(12))… in this vault; `credentials()` lists them")
        }
        guard credential.state != .revoked else {
            throw LatchkeyError(code: .credentialRevoked, reason: "this credential was revoked by the provider; it cannot be exported")
        }
        guard let issuer = credential.issuer else {
            throw LatchkeyError(code: .noCredential, reason: "this credential does not record its provider, so it cannot be exported")
        }
        let provider = try ProviderAddress(issuer)
        try allowedDomains.check(provider)
        let conversation = ProviderConversation(flow: flow, provider: provider, transport: configuration.transport)

        // Prove possession of the credential and get the first code.
        let begun = try await revocationAware(credential) {
            try await conversation.post(provider.url("v1/transfers"), json: JSONEncoder().encode(["credential": credential.id]))
        }
        let transferID = try begun.string("transfer", maximumLength: 256)
        let opened = try await revocationAware(credential) {
            let options = try begun.requestOptions()
            let submit = try conversation.url(begun.string("submit"), named: "submit")
            let (assertion, _) = try authenticator.getAssertion(options, origin: provider.origin, credentialID: credential.credentialID)
            return try await conversation.post(submit, json: assertion.json())
        }
        var code = try Self.code(in: opened)
        let status = try conversation.url(opened.string("status"), named: "status")
        let cancel = try conversation.url(opened.string("cancel"), named: "cancel")
        emit(.codeIssued(code, expiresAt: Self.expiry(in: opened)))
        flow.logger.debug("export waiting for an importer", metadata: ["provider": .string(provider.issuer)])

        var redeemed = false
        do {
            while true {
                try await Task.sleep(for: configuration.transferPollInterval)
                let reply = try await conversation.get(status)
                switch try reply.string("state", maximumLength: 32) {
                case "waiting":
                    let current = try Self.code(in: reply)
                    if current != code {
                        code = current
                        emit(.codeRotated(current, expiresAt: Self.expiry(in: reply)))
                    }
                case "redeemed":
                    if !redeemed { emit(.codeRedeemed) }
                    redeemed = true
                case "import-requested":
                    let (request, expectedChallenge) = try Self.importRequest(in: reply, transferID: transferID)
                    emit(.importRequested(request))
                    let answer = try await flow.ask(FlowStep(
                        name: .confirmImport,
                        message: "Approve \"\(request.deviceName)\" (key \(request.fingerprint)) to sign in as \(credential.user.name)?",
                        fields: [FlowStep.Field(name: "approve", required: true, kind: "boolean")],
                        importRequest: request
                    ))
                    flow.emit(.stepAnswered(.confirmImport))
                    if answer.fields["approve"] == "true" {
                        let options = try reply.requestOptions()
                        guard options.challenge.data == expectedChallenge else {
                            throw LatchkeyError(code: .malformedResponse, reason: "the approval challenge does not bind the importing device's key; nothing was signed")
                        }
                        let (assertion, _) = try authenticator.getAssertion(options, origin: provider.origin, credentialID: credential.credentialID)
                        _ = try await conversation.post(conversation.url(reply.string("approve"), named: "approve"), json: assertion.json())
                        emit(.completed(request))
                    } else {
                        _ = try await conversation.post(conversation.url(reply.string("decline"), named: "decline"), json: Data("{}".utf8))
                        emit(.declined(request))
                    }
                    return
                case "cancelled":
                    emit(.cancelled)
                    return
                case "expired":
                    emit(.expired)
                    return
                case "failed":
                    throw LatchkeyError(code: .transferEnded, reason: "too many wrong codes were tried, so the provider closed the transfer; start a new export")
                default:
                    throw LatchkeyError(code: .malformedResponse, reason: "the transfer is in a state this client does not know")
                }
            }
        } catch {
            if error is CancellationError || (error as? LatchkeyError)?.code == .cancelled {
                // This task is cancelled; tell the provider from a task that is not.
                Task { _ = try? await conversation.post(cancel, json: Data("{}".utf8)) }
            }
            throw error
        }
    }

    private static func code(in reply: ProviderConversation.Reply) throws -> TransferCode {
        guard let code = TransferCode(try reply.string("code", maximumLength: 32)) else {
            throw LatchkeyError(code: .malformedResponse, reason: "the provider's transfer code is malformed")
        }
        return code
    }

    private static func expiry(in reply: ProviderConversation.Reply) -> Date {
        Date(timeIntervalSince1970: reply.object["codeExpiresAt"]?.numberValue ?? 0)
    }

    /// The importer as the provider describes it, checked: the fingerprint is computed
    /// here from the importer's key, and the approval challenge recomputed from it.
    private static func importRequest(in reply: ProviderConversation.Reply, transferID: String) throws -> (request: ImportRequest, expectedChallenge: Data) {
        func malformed(_ what: String) -> LatchkeyError {
            LatchkeyError(code: .malformedResponse, reason: "the import request's \(what) is malformed")
        }
        guard let importer = reply.object["importer"]?.objectValue,
              let deviceName = importer["deviceName"]?.stringValue, !deviceName.isEmpty, deviceName.count <= 64
        else { throw malformed("device name") }
        guard let idText = importer["credentialID"]?.stringValue, let credentialID = try? Base64URL.decode(idText), credentialID.count <= 1023 else {
            throw malformed("credential ID")
        }
        guard let key = importer["publicKey"]?.objectValue,
              let jwkData = try? JSONEncoder().encode(key), let jwk = try? JSONDecoder().decode(JSONWebKey.self, from: jwkData),
              (try? VerifyingKey(jwk: jwk)) != nil, let thumbprint = try? jwk.thumbprint()
        else { throw malformed("public key") }
        guard let nonceText = importer["nonce"]?.stringValue, let nonce = try? Base64URL.decode(nonceText), (16...64).contains(nonce.count) else {
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
