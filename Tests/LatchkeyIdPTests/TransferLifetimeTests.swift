import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyWebAuthn
import Testing

/// Transfers someone started without proving possession of the credential: anyone who
/// knows a credential ID can do that much, so such a transfer must not linger.
@Suite("Transfer lifetimes")
struct TransferLifetimeTests {
    @Test("an unopened transfer expires after a minute, not the transfer lifetime")
    func unopenedTransferExpires() async throws {
        let state = try ProviderState(configuration: ProviderConfiguration(adminToken: "t"))
        let key = try SigningKey.generate(.es256)
        let credentialID = try SecureRandom.bytes(count: 32)
        let record = RelyingParty.RegisteredCredential(
            id: credentialID, publicKey: try COSEKey(key.publicKey), signCount: 0, backupEligible: false, backupState: false,
            userVerified: true, attestationFormat: "none", aaguid: Data(count: 16), transports: []
        )
        await state.addCredentialForTesting(ProviderState.Credential(identityID: "someone", record: record))
        let (id, _) = try await state.beginTransfer(credentialID: credentialID)

        await state.pruneTransfers(now: Date().addingTimeInterval(ProviderState.unopenedTransferLifetime - 5))
        #expect(await state.transferState(id) == .opening)
        await state.pruneTransfers(now: Date().addingTimeInterval(ProviderState.unopenedTransferLifetime + 1))
        #expect(await state.transferState(id) == .expired)
    }
}

extension ProviderState {
    func addCredentialForTesting(_ credential: Credential) {
        credentials[credential.record.id] = credential
    }

    func transferState(_ id: String) -> Transfer.State? {
        transfers[id]?.state
    }
}
