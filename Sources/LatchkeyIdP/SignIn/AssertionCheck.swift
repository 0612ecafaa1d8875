import Foundation
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyWebAuthn

/// The assertion of a sign-in checked against its credential (WebAuthn L3 §7.2), the same
/// for the redirect flow and the challenge flow: the signer read with the session's spent
/// mark, then the signature, challenge, origin and counter verified outside any
/// transaction. A refusal of the credential or the assertion is a decision the audit log
/// keeps (`signin.failed`, a write of its own, naming the identity when the credential
/// is known); a session already spent changed nothing and writes nothing.
struct AssertionCheck: Sendable {
    let context: ProviderContext
    let credentials: CredentialRegistry

    struct Attempt: Sendable {
        var sessionID: String
        var clientID: String
        var challenge: Data
        var allowedCredentials: [Data]
        /// What a spent session answers (each flow has its own code for it).
        var spentError: ProviderError
    }

    /// The credential and the counter the assertion carries.
    func verify(_ response: AuthenticationResponseJSON, for attempt: Attempt) async throws -> (StoredCredential, UInt32) {
        let credential: StoredCredential
        do {
            credential = try await context.database.read { transaction in
                try await self.credentials.signer(response.rawId.data, session: attempt.sessionID, spentError: attempt.spentError, in: transaction)
            }
        } catch let error as ProviderError where error.code != attempt.spentError.code {
            await failed(error, subject: nil, credentialID: response.rawId.data, client: attempt.clientID)
            throw error
        }
        do {
            let signCount = try context.verify(response, by: credential, challenge: attempt.challenge, allowed: attempt.allowedCredentials)
            return (credential, signCount)
        } catch let error as ProviderError {
            await failed(error, subject: credential.identityID, credentialID: credential.record.id, client: attempt.clientID)
            throw error
        }
    }

    /// Writes `signin.failed`; the refusal stands whether or not the write gets through.
    private func failed(_ error: ProviderError, subject: String?, credentialID: Data, client: String) async {
        let entry = AuditEntry(
            .signInFailed, outcome: .failure, error: error.code, actor: subject.map { .identity($0) } ?? .anonymous, subject: subject, client: client,
            details: AuditEvent.Details(credential: String(Base64URL.encode(credentialID).prefix(AuditEntry.maximumCredentialLength)))
        )
        await context.audit.recordQuietly(entry, in: context.database, logger: context.logger)
    }
}
