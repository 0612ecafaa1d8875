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
        let provider = try await Provider.open(ProviderConfiguration(adminToken: "t"))
        let key = try SigningKey.generate(.es256)
        let credentialID = try SecureRandom.bytes(count: 32)
        let record = RelyingParty.RegisteredCredential(
            id: credentialID, publicKey: try COSEKey(key.publicKey), signCount: 0, backupEligible: false, backupState: false,
            userVerified: true, attestationFormat: "none", aaguid: Data(count: 16), transports: []
        )
        try await provider.context.database.transaction { transaction in
            let identity = try await provider.identities.create(username: "someone", email: nil, displayName: nil, in: transaction)
            try await provider.credentials.register(record, identityID: identity.id, in: transaction)
        }
        let (id, _) = try await provider.transfers.begin(credentialID: credentialID)

        let housekeeping = Housekeeping(provider: provider, interval: .seconds(60))
        try await housekeeping.prune(now: Date().addingTimeInterval(Transfers.unopenedTransferLifetime - 5))
        #expect(try await provider.transfers.state(id) == .opening)
        try await housekeeping.prune(now: Date().addingTimeInterval(Transfers.unopenedTransferLifetime + 1))
        #expect(try await provider.transfers.state(id) == .expired)
        await provider.context.database.close()
    }
}
