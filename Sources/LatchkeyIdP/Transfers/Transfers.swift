import Foundation
import LatchkeyCrypto
import LatchkeyWebAuthn
import LatchkeyProtocol
import LatchkeyOAuth

/// Device linking (docs/PROTOCOL.md section 5): moving a credential to another host with
/// a short code, with no private key ever leaving a host. The exporter proves possession
/// of its credential, gets a code, and later approves the importer's registration with a
/// signature over a challenge that binds it; only then is the new credential bound.
/// Every step reads and writes the transfer in one transaction, so two instances never
/// both redeem one code, and wrong codes are counted in the store for every instance.
struct Transfers: Sendable {
    let context: ProviderContext
    let identities: IdentityDirectory
    let credentials: CredentialRegistry

    /// What the exporter sees when it polls.
    enum ExporterStatus: Sendable {
        case waiting(code: String, expiresAt: Date)
        case redeemed
        case importRequested(Transfer.PendingImport, PublicKeyCredentialRequestOptionsJSON)
        case ended(Transfer.State)
    }

    /// How long a transfer's first step waits for its exporter's proof of possession.
    static let unopenedTransferLifetime: TimeInterval = 60

    private var configuration: ProviderConfiguration { context.configuration }

    private func load(_ id: String, in transaction: any SQLTransaction) async throws -> Transfer? {
        try await transaction.first("SELECT \(raw: Transfer.columns) FROM transfers WHERE id = \(id)").map(Transfer.init(row:))
    }

    // MARK: Exporter

    /// Starts a transfer of `credentialID`'s identity: the transfer id, the sealed opening
    /// ticket, and request options to prove possession. Nothing is stored yet.
    func begin(credentialID: Data, now: Date = ProviderClock.now) async throws -> (id: String, ticket: String, options: PublicKeyCredentialRequestOptionsJSON) {
        guard credentialID.count <= 1023 else { throw ProviderError.badRequest(.invalidCredential, "unknown credential") }
        let tickets = try context.tickets
        // An unknown or revoked credential is told apart here as before: its ID was needed
        // to get this far, and the answer reveals nothing the ID's holder does not know.
        _ = try await context.database.read { try await self.credentials.signer(credentialID, in: $0) }
        let opening = TransferOpening(
            id: try ProviderContext.randomToken(), credentialID: credentialID, challenge: try SecureRandom.bytes(count: 32),
            expiresAt: now.addingTimeInterval(min(Self.unopenedTransferLifetime, configuration.transferLifetime))
        )
        let options = PublicKeyCredentialRequestOptionsJSON(
            challenge: opening.challenge, rpId: context.relyingParty.id, allowCredentials: [.init(id: credentialID)], userVerification: "preferred"
        )
        return (opening.id, try tickets.seal(opening, purpose: TransferOpening.purpose), options)
    }

    /// Checks the exporter's assertion over the opening ticket's challenge, then creates
    /// the transfer and issues the exporter token and the first code. An identity may have
    /// ``ProviderConfiguration/maximumTransfersPerIdentity`` transfers going at once.
    func open(_ id: String, ticket: String, response: AuthenticationResponseJSON, now: Date = ProviderClock.now) async throws -> (token: String, code: String, expiresAt: Date) {
        guard let opening = try context.tickets.open(TransferOpening.self, from: ticket, purpose: TransferOpening.purpose),
              opening.id == id, opening.expiresAt > now
        else {
            throw ProviderError.notFound("unknown, opened or expired transfer")
        }
        guard response.rawId.data == opening.credentialID else {
            throw ProviderError.badRequest(.invalidAssertion, "the assertion is not by the credential that started the transfer")
        }
        let credential = try await context.database.read { try await self.credentials.signer(opening.credentialID, in: $0) }
        let signCount = try context.verify(response, by: credential, challenge: opening.challenge, allowed: [opening.credentialID])
        let token = try ProviderContext.randomToken()
        let tokenHash = try ProviderContext.hash(token)
        let perIdentity = configuration.maximumTransfersPerIdentity
        return try await context.database.transaction { transaction -> Verdict<(String, String, Date)> in
            guard try await SpentTickets.spend(opening.id, until: opening.expiresAt, in: transaction) else {
                return .refused(.notFound("unknown, opened or expired transfer"))
            }
            let live = try await transaction.first("""
                SELECT count(*) AS live FROM transfers WHERE identity_id = \(credential.identityID) AND ended_at IS NULL AND expires_at > \(now)
                """)?.decode("live", as: Int64.self) ?? 0
            guard live < perIdentity else {
                return .refused(ProviderError.slowDown("this account has \(perIdentity) transfers going; finish or cancel one first"))
            }
            try await self.credentials.recordUse(credential, signCount: signCount, now: now, in: transaction)
            var transfer = Transfer(
                id: opening.id, identityID: credential.identityID, exporterCredentialID: opening.credentialID,
                expiresAt: now.addingTimeInterval(self.configuration.transferLifetime)
            )
            transfer.exporterTokenHash = tokenHash
            transfer.state = .waiting
            try await self.issueCode(&transfer, now: now, in: transaction)
            try await transfer.save(in: transaction)
            return .accepted((token, transfer.code ?? "", transfer.codeExpiresAt))
        }.get()
    }

    /// A fresh code for a waiting transfer; the previous one stops working.
    private func issueCode(_ transfer: inout Transfer, now: Date, in transaction: any SQLTransaction) async throws {
        var prefix = try CrockfordBase32.randomSymbols(count: Transfer.prefixLength)
        var tries = 0
        while try await transaction.first("SELECT 1 FROM transfers WHERE code_prefix = \(prefix) AND id <> \(transfer.id)") != nil {
            tries += 1
            guard tries < 64 else { throw ProviderError.temporarilyUnavailable("no free transfer code") }
            prefix = try CrockfordBase32.randomSymbols(count: Transfer.prefixLength)
        }
        let secret = try CrockfordBase32.randomSymbols(count: Transfer.codeLength - Transfer.prefixLength)
        transfer.codePrefix = prefix
        transfer.codeSecretHash = try ProviderContext.hash(secret)
        transfer.code = Transfer.display(prefix + secret)
        transfer.codeExpiresAt = min(now.addingTimeInterval(configuration.transferCodeLifetime), transfer.expiresAt)
    }

    /// The transfer `id`, if `token` is the exporter's (or, with `\.importerTokenHash`,
    /// the importer's); one past its lifetime is expired here.
    private func transfer(
        _ id: String, token: String, side: KeyPath<Transfer, Data?> = \.exporterTokenHash, now: Date, in transaction: any SQLTransaction
    ) async throws -> Transfer {
        guard var transfer = try await load(id, in: transaction), let hash = transfer[keyPath: side],
              ConstantTime.isEqual(hash, try ProviderContext.hash(token))
        else {
            throw ProviderError.notFound("unknown transfer or wrong token")
        }
        if !transfer.state.isFinal, transfer.expiresAt <= now {
            transfer.end(.expired, at: now)
            try await transfer.save(in: transaction)
        }
        return transfer
    }

    /// The exporter's view; a waiting transfer whose code expired gets a new code here.
    func exporterStatus(_ id: String, token: String, now: Date = ProviderClock.now) async throws -> ExporterStatus {
        let transfer = try await context.database.transaction { transaction -> Transfer in
            var transfer = try await self.transfer(id, token: token, now: now, in: transaction)
            if transfer.state == .waiting, transfer.codeExpiresAt <= now {
                try await self.issueCode(&transfer, now: now, in: transaction)
                try await transfer.save(in: transaction)
            }
            return transfer
        }
        switch transfer.state {
        case .waiting:
            return .waiting(code: transfer.code ?? "", expiresAt: transfer.codeExpiresAt)
        case .opening, .redeemed:
            return .redeemed
        case .importRequested:
            guard let pending = transfer.pending else { return .ended(.failed) }
            return .importRequested(pending, PublicKeyCredentialRequestOptionsJSON(
                challenge: pending.approvalChallenge, rpId: context.relyingParty.id,
                allowCredentials: [.init(id: transfer.exporterCredentialID)], userVerification: "preferred"
            ))
        default:
            return .ended(transfer.state)
        }
    }

    /// The exporter approves with an assertion over the approval challenge: the importer's
    /// credential is bound to the identity.
    func approve(_ id: String, token: String, response: AuthenticationResponseJSON, now: Date = ProviderClock.now) async throws -> Data {
        let (transfer, credential) = try await context.database.transaction { transaction in
            let transfer = try await self.transfer(id, token: token, now: now, in: transaction)
            guard transfer.state == .importRequested, transfer.pending != nil else {
                throw ProviderError.badRequest(.invalidRequest, "no import is waiting for approval")
            }
            guard response.rawId.data == transfer.exporterCredentialID else {
                throw ProviderError.badRequest(.invalidAssertion, "the approval is not by the exporting credential")
            }
            return (transfer, try await self.credentials.signer(transfer.exporterCredentialID, in: transaction))
        }
        guard let pending = transfer.pending else { throw ProviderError.badRequest(.invalidRequest, "no import is waiting for approval") }
        let signCount = try context.verify(response, by: credential, challenge: pending.approvalChallenge, allowed: [transfer.exporterCredentialID])
        try await context.database.transaction { transaction in
            guard var current = try await self.load(id, in: transaction), current.state == .importRequested,
                  current.pending?.approvalChallenge == pending.approvalChallenge
            else {
                throw ProviderError.badRequest(.invalidRequest, "no import is waiting for approval")
            }
            try await self.credentials.recordUse(credential, signCount: signCount, now: now, in: transaction)
            try await self.credentials.register(pending.record, identityID: current.identityID, now: now, in: transaction)
            try await self.context.audit.record(AuditEntry(
                .transferApproved, actor: .identity(current.identityID), subject: current.identityID,
                details: AuditEvent.Details(credential: Base64URL.encode(pending.record.id)), now: now
            ), in: transaction)
            current.boundCredentialID = pending.record.id
            current.end(.completed, at: now)
            try await current.save(in: transaction)
        }
        return pending.record.id
    }

    /// The exporter declines, or cancels while waiting: nothing is bound.
    func end(_ id: String, token: String, as final: Transfer.State, now: Date = ProviderClock.now) async throws {
        try await context.database.transaction { transaction in
            var transfer = try await self.transfer(id, token: token, now: now, in: transaction)
            guard !transfer.state.isFinal else { return }
            transfer.end(final, at: now)
            try await transfer.save(in: transaction)
        }
    }

    // MARK: Importer

    /// Redeems a typed code: creation options for the exporter's identity. Wrong codes
    /// count against the code (five kill the transfer) and against the client address,
    /// in the store, so every instance sees them.
    func redeem(code typed: String, clientKey: String, now: Date = ProviderClock.now) async throws -> (id: String, token: String, options: PublicKeyCredentialCreationOptionsJSON) {
        let counterKey = "transfer-code|" + clientKey
        let maximumFailures = configuration.maximumTransferCodeFailuresPerAddress
        let maximumAttempts = configuration.maximumCodeAttempts
        let token = try ProviderContext.randomToken()
        let challenge = try SecureRandom.bytes(count: 32)
        return try await context.database.transaction { transaction -> Verdict<(String, String, PublicKeyCredentialCreationOptionsJSON)> in
            guard try await AttemptCounters.count(counterKey, now: now, in: transaction) < maximumFailures else {
                return .refused(ProviderError.slowDown("too many wrong codes from this address; try again later"))
            }
            func failure(_ description: String) async throws -> Verdict<(String, String, PublicKeyCredentialCreationOptionsJSON)> {
                _ = try await AttemptCounters.increment(counterKey, now: now, in: transaction)
                return .refused(.badRequest(.invalidCode, description))
            }
            guard typed.utf8.count <= 64, let symbols = CrockfordBase32.normalise(typed), symbols.count == Transfer.codeLength else {
                return try await failure("a transfer code is 9 symbols, like 7KQ-4M2-X9A")
            }
            let prefix = String(symbols.prefix(Transfer.prefixLength))
            guard var transfer = try await transaction.first("SELECT \(raw: Transfer.columns) FROM transfers WHERE code_prefix = \(prefix)").map(Transfer.init(row:)),
                  transfer.state == .waiting, transfer.expiresAt > now, let secretHash = transfer.codeSecretHash
            else {
                return try await failure("unknown or expired code")
            }
            guard transfer.codeExpiresAt > now else {
                return try await failure("this code has expired; use the one the other device shows now")
            }
            guard ConstantTime.isEqual(try ProviderContext.hash(String(symbols.dropFirst(Transfer.prefixLength))), secretHash) else {
                transfer.failedAttempts += 1
                if transfer.failedAttempts >= maximumAttempts {
                    transfer.end(.failed, at: now)
                    try await transfer.save(in: transaction)
                    return try await failure("wrong code; too many wrong codes, so the transfer was closed")
                }
                try await transfer.save(in: transaction)
                return try await failure("unknown or expired code")
            }
            guard let identity = try await self.identities.identity(transfer.identityID, in: transaction) else {
                return .refused(.notFound("identity gone"))
            }
            transfer.state = .redeemed
            transfer.codePrefix = nil
            transfer.code = nil
            transfer.codeSecretHash = nil
            transfer.importerTokenHash = try ProviderContext.hash(token)
            transfer.registrationChallenge = challenge
            try await transfer.save(in: transaction)
            let existing = try await self.credentials.credentials(of: identity.id, in: transaction).map(\.record.id)
            return .accepted((transfer.id, token, self.context.creationOptions(for: identity, challenge: challenge, excluding: existing)))
        }.get()
    }

    /// The importer's registration and device name; it then waits for approval.
    func submitImport(_ id: String, token: String, registration: RegistrationResponseJSON, deviceName: String, now: Date = ProviderClock.now) async throws {
        let name = try FreeformText.validated(deviceName, field: "the device name", maximumScalars: 64)
        guard !name.isEmpty else {
            throw ProviderError.badRequest(.invalidRequest, "the device name must be 1 to 64 printable characters")
        }
        let (transfer, identity) = try await context.database.transaction { transaction in
            let transfer = try await self.transfer(id, token: token, side: \.importerTokenHash, now: now, in: transaction)
            return (transfer, try await self.identities.identity(transfer.identityID, in: transaction))
        }
        guard transfer.state == .redeemed, let challenge = transfer.registrationChallenge else {
            throw ProviderError.badRequest(.invalidRequest, "this transfer does not expect a registration now")
        }
        let record = try await context.verifyRegistration(registration, challenge: challenge, for: identity)
        let jwk = try record.publicKey.verifyingKey.jwk
        let thumbprint = try jwk.thumbprint()
        let nonce = try SecureRandom.bytes(count: 32)
        let pending = Transfer.PendingImport(
            record: record, deviceName: name, jwk: jwk, thumbprint: thumbprint, nonce: nonce,
            approvalChallenge: try BoundChallenge.transferApproval(transferID: id, credentialID: record.id, thumbprint: thumbprint, deviceName: name, nonce: nonce)
        )
        try await context.database.transaction { transaction in
            guard var current = try await self.load(id, in: transaction), current.state == .redeemed, current.registrationChallenge == challenge else {
                throw ProviderError.badRequest(.invalidRequest, "this transfer does not expect a registration now")
            }
            guard try await self.credentials.credential(record.id, in: transaction) == nil else {
                throw ProviderError.badRequest(.invalidRegistration, "credential already registered")
            }
            current.pending = pending
            current.registrationChallenge = nil
            current.state = .importRequested
            try await current.save(in: transaction)
        }
    }

    /// The importer's view: waiting, or the outcome (with the bound credential's id).
    func importerStatus(_ id: String, token: String, now: Date = ProviderClock.now) async throws -> (Transfer.State, Data?) {
        let transfer = try await context.database.transaction { transaction in
            try await self.transfer(id, token: token, side: \.importerTokenHash, now: now, in: transaction)
        }
        return (transfer.state, transfer.boundCredentialID)
    }

    // MARK: Housekeeping

    /// Expires transfers past their lifetime (wiping what they hold) and forgets ended
    /// ones a minute later.
    func prune(now: Date = ProviderClock.now, in transaction: any SQLTransaction) async throws {
        let expired = try await transaction.query("""
            SELECT \(raw: Transfer.columns) FROM transfers WHERE ended_at IS NULL AND expires_at <= \(now) LIMIT 1000
            """).map(Transfer.init(row:))
        for var transfer in expired {
            transfer.end(.expired, at: now)
            try await transfer.save(in: transaction)
        }
        try await transaction.execute("DELETE FROM transfers WHERE ended_at IS NOT NULL AND ended_at < \(now.addingTimeInterval(-60))")
    }

    /// A transfer's state (tests and the admin API).
    func state(_ id: String) async throws -> Transfer.State? {
        try await context.database.read { try await self.load(id, in: $0)?.state }
    }
}
