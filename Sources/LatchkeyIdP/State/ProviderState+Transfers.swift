import Foundation
import LatchkeyCrypto
import LatchkeyWebAuthn

/// Device linking (docs/PROTOCOL.md section 5): moving a credential to another host with
/// a short code, with no private key ever leaving a host. The exporter proves possession
/// of its credential, gets a code, and later approves the importer's registration with a
/// signature over a challenge that binds it; only then is the new credential bound.
extension ProviderState {
    /// What the exporter sees when it polls.
    enum ExporterStatus: Sendable {
        case waiting(code: String, expiresAt: Date)
        case redeemed
        case importRequested(Transfer.PendingImport, PublicKeyCredentialRequestOptionsJSON)
        case ended(Transfer.State)
    }

    // MARK: Exporter

    /// How long a transfer waits for its exporter's proof of possession.
    static let unopenedTransferLifetime: TimeInterval = 60

    /// Starts a transfer of `credentialID`'s identity: request options to prove possession.
    func beginTransfer(credentialID: Data) throws -> (String, PublicKeyCredentialRequestOptionsJSON) {
        pruneTransfers()
        guard let credential = credentials[credentialID] else {
            throw ProviderError.badRequest("invalid_credential", "unknown credential")
        }
        guard !credential.revoked else {
            throw ProviderError.badRequest("credential_revoked", "this credential was revoked; it cannot export")
        }
        guard transfers.count < configuration.maximumTransfers else {
            throw ProviderError(status: 503, error: "temporarily_unavailable", description: "too many transfers in progress")
        }
        let id = try Self.randomToken()
        let challenge = try SecureRandom.bytes(count: 32)
        // Anyone who knows a credential ID can get this far, so an unopened transfer
        // lives only a minute; proving possession (openTransfer) grants the full lifetime.
        let openingLifetime = min(Self.unopenedTransferLifetime, configuration.transferLifetime)
        var transfer = Transfer(id: id, identityID: credential.identityID, exporterCredentialID: credentialID, expiresAt: Date().addingTimeInterval(openingLifetime))
        transfer.openChallenge = challenge
        transfers[id] = transfer
        return (id, PublicKeyCredentialRequestOptionsJSON(challenge: challenge, rpId: relyingParty.id, allowCredentials: [.init(id: credentialID)], userVerification: "preferred"))
    }

    /// Checks the exporter's assertion and issues the exporter token and the first code.
    func openTransfer(_ id: String, response: AuthenticationResponseJSON) throws -> (token: String, code: String, expiresAt: Date) {
        pruneTransfers()
        guard var transfer = transfers[id], transfer.state == .opening, let challenge = transfer.openChallenge else {
            throw ProviderError.notFound("unknown, opened or expired transfer")
        }
        guard response.rawId.data == transfer.exporterCredentialID else {
            throw ProviderError.badRequest("invalid_assertion", "the assertion is not by the credential that started the transfer")
        }
        _ = try verifyAssertion(response, challenge: challenge, allowedCredentialIDs: [transfer.exporterCredentialID])
        try persist()
        let token = try Self.randomToken()
        transfer.exporterTokenHash = try Self.hash(token)
        transfer.openChallenge = nil
        transfer.state = .waiting
        transfer.expiresAt = Date().addingTimeInterval(configuration.transferLifetime)
        try issueCode(&transfer)
        transfers[id] = transfer
        return (token, transfer.code ?? "", transfer.codeExpiresAt)
    }

    /// A fresh code for a waiting transfer; the previous one stops working.
    private func issueCode(_ transfer: inout Transfer) throws {
        if let old = transfer.codePrefix { transferPrefixes[old] = nil }
        var prefix = try CrockfordBase32.randomSymbols(count: Transfer.prefixLength)
        var tries = 0
        while transferPrefixes[prefix] != nil {
            tries += 1
            guard tries < 64 else { throw ProviderError(status: 503, error: "temporarily_unavailable", description: "no free transfer code") }
            prefix = try CrockfordBase32.randomSymbols(count: Transfer.prefixLength)
        }
        let secret = try CrockfordBase32.randomSymbols(count: Transfer.codeLength - Transfer.prefixLength)
        transfer.codePrefix = prefix
        transfer.codeSecretHash = try Self.hash(secret)
        transfer.code = Transfer.display(prefix + secret)
        transfer.codeExpiresAt = min(Date().addingTimeInterval(configuration.transferCodeLifetime), transfer.expiresAt)
        transferPrefixes[prefix] = transfer.id
    }

    private func exporterTransfer(_ id: String, token: String) throws -> Transfer {
        pruneTransfers()
        guard let transfer = transfers[id], let hash = transfer.exporterTokenHash, ConstantTime.isEqual(hash, try Self.hash(token)) else {
            throw ProviderError.notFound("unknown transfer or wrong token")
        }
        return transfer
    }

    /// The exporter's view; a waiting transfer whose code expired gets a new code here.
    func exporterStatus(_ id: String, token: String) throws -> ExporterStatus {
        var transfer = try exporterTransfer(id, token: token)
        switch transfer.state {
        case .waiting:
            if transfer.codeExpiresAt <= Date() {
                try issueCode(&transfer)
                transfers[id] = transfer
            }
            return .waiting(code: transfer.code ?? "", expiresAt: transfer.codeExpiresAt)
        case .opening, .redeemed:
            return .redeemed
        case .importRequested:
            guard let pending = transfer.pending else { return .ended(.failed) }
            return .importRequested(pending, PublicKeyCredentialRequestOptionsJSON(
                challenge: pending.approvalChallenge, rpId: relyingParty.id,
                allowCredentials: [.init(id: transfer.exporterCredentialID)], userVerification: "preferred"
            ))
        default:
            return .ended(transfer.state)
        }
    }

    /// The exporter approves with an assertion over the approval challenge: the importer's
    /// credential is bound to the identity.
    func approveTransfer(_ id: String, token: String, response: AuthenticationResponseJSON) throws -> Data {
        var transfer = try exporterTransfer(id, token: token)
        guard transfer.state == .importRequested, let pending = transfer.pending else {
            throw ProviderError.badRequest("invalid_request", "no import is waiting for approval")
        }
        guard response.rawId.data == transfer.exporterCredentialID else {
            throw ProviderError.badRequest("invalid_assertion", "the approval is not by the exporting credential")
        }
        _ = try verifyAssertion(response, challenge: pending.approvalChallenge, allowedCredentialIDs: [transfer.exporterCredentialID])
        guard credentials[pending.record.id] == nil else {
            throw ProviderError.badRequest("invalid_registration", "credential already registered")
        }
        credentials[pending.record.id] = Credential(identityID: transfer.identityID, record: pending.record)
        transfer.boundCredentialID = pending.record.id
        transfer.end(.completed)
        transfers[id] = transfer
        try persist()
        return pending.record.id
    }

    /// The exporter declines, or cancels while waiting: nothing is bound.
    func endTransfer(_ id: String, token: String, as final: Transfer.State) throws {
        var transfer = try exporterTransfer(id, token: token)
        guard !transfer.state.isFinal else { return }
        if let prefix = transfer.codePrefix { transferPrefixes[prefix] = nil }
        transfer.end(final)
        transfers[id] = transfer
    }

    // MARK: Importer

    /// Redeems a typed code: creation options for the exporter's identity. Wrong codes
    /// count against the code (five kill the transfer) and against the client address.
    func redeemTransfer(code typed: String, clientAddress: String) throws -> (id: String, token: String, options: PublicKeyCredentialCreationOptionsJSON) {
        pruneTransfers()
        let now = Date()
        let recent = (transferFailures[clientAddress] ?? []).filter { now.timeIntervalSince($0) < 600 }
        transferFailures[clientAddress] = recent.isEmpty ? nil : recent
        guard recent.count < configuration.maximumTransferCodeFailuresPerAddress else {
            throw ProviderError(status: 429, error: "slow_down", description: "too many wrong codes from this address; try again later")
        }
        func failure(_ description: String) -> ProviderError {
            if transferFailures.count > 50_000 { transferFailures.removeAll() }
            transferFailures[clientAddress, default: []].append(now)
            return ProviderError.badRequest("invalid_code", description)
        }
        guard let symbols = CrockfordBase32.normalise(typed), symbols.count == Transfer.codeLength else {
            throw failure("a transfer code is 9 symbols, like 7KQ-4M2-X9A")
        }
        let prefix = String(symbols.prefix(Transfer.prefixLength))
        guard let id = transferPrefixes[prefix], var transfer = transfers[id], transfer.state == .waiting, let secretHash = transfer.codeSecretHash else {
            throw failure("unknown or expired code")
        }
        guard transfer.codeExpiresAt > now else {
            throw failure("this code has expired; use the one the other device shows now")
        }
        guard ConstantTime.isEqual(try Self.hash(String(symbols.dropFirst(Transfer.prefixLength))), secretHash) else {
            transfer.failedAttempts += 1
            if transfer.failedAttempts >= configuration.maximumCodeAttempts {
                transferPrefixes[prefix] = nil
                transfer.end(.failed)
                transfers[id] = transfer
                throw failure("wrong code; too many wrong codes, so the transfer was closed")
            }
            transfers[id] = transfer
            throw failure("unknown or expired code")
        }
        guard let identity = identities[transfer.identityID] else { throw ProviderError.notFound("identity gone") }
        transferPrefixes[prefix] = nil
        let token = try Self.randomToken()
        let challenge = try SecureRandom.bytes(count: 32)
        transfer.state = .redeemed
        transfer.code = nil
        transfer.codeSecretHash = nil
        transfer.importerTokenHash = try Self.hash(token)
        transfer.registrationChallenge = challenge
        transfers[id] = transfer
        return (id, token, creationOptions(for: identity, challenge: challenge))
    }

    private func importerTransfer(_ id: String, token: String) throws -> Transfer {
        pruneTransfers()
        guard let transfer = transfers[id], let hash = transfer.importerTokenHash, ConstantTime.isEqual(hash, try Self.hash(token)) else {
            throw ProviderError.notFound("unknown transfer or wrong token")
        }
        return transfer
    }

    /// The importer's registration and device name; it then waits for approval.
    func submitImport(_ id: String, token: String, registration: RegistrationResponseJSON, deviceName: String) throws {
        var transfer = try importerTransfer(id, token: token)
        guard transfer.state == .redeemed, let challenge = transfer.registrationChallenge else {
            throw ProviderError.badRequest("invalid_request", "this transfer does not expect a registration now")
        }
        let name = deviceName.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 64, name.unicodeScalars.allSatisfy({ !CharacterSet.controlCharacters.contains($0) }) else {
            throw ProviderError.badRequest("invalid_request", "the device name must be 1 to 64 printable characters")
        }
        let record: RelyingParty.RegisteredCredential
        do {
            record = try relyingParty.verifyRegistration(registration, challenge: challenge)
        } catch let error as WebAuthnError {
            throw ProviderError.badRequest("invalid_registration", error.reason)
        }
        guard credentials[record.id] == nil else { throw ProviderError.badRequest("invalid_registration", "credential already registered") }
        let jwk = try record.publicKey.verifyingKey.jwk
        let thumbprint = try jwk.thumbprint()
        let nonce = try SecureRandom.bytes(count: 32)
        var members = ["kty": jwk.kty]
        if let crv = jwk.crv { members["crv"] = crv }
        if let x = jwk.x { members["x"] = x }
        if let y = jwk.y { members["y"] = y }
        transfer.pending = Transfer.PendingImport(
            record: record, deviceName: name, jwk: members, thumbprint: thumbprint, nonce: nonce,
            approvalChallenge: try BoundChallenge.transferApproval(transferID: id, credentialID: record.id, thumbprint: thumbprint, deviceName: name, nonce: nonce)
        )
        transfer.registrationChallenge = nil
        transfer.state = .importRequested
        transfers[id] = transfer
    }

    /// The importer's view: waiting, or the outcome (with the bound credential's id).
    func importerStatus(_ id: String, token: String) throws -> (Transfer.State, Data?) {
        let transfer = try importerTransfer(id, token: token)
        return (transfer.state, transfer.boundCredentialID)
    }

    // MARK: Housekeeping

    /// Expires transfers past their lifetime and forgets ended ones a minute later.
    func pruneTransfers(now: Date = Date()) {
        for (id, transfer) in transfers {
            if !transfer.state.isFinal, transfer.expiresAt <= now {
                if let prefix = transfer.codePrefix, transferPrefixes[prefix] == id { transferPrefixes[prefix] = nil }
                transfers[id]?.end(.expired, at: now)
            } else if let ended = transfer.endedAt, now.timeIntervalSince(ended) > 60 {
                transfers[id] = nil
            }
        }
    }
}
