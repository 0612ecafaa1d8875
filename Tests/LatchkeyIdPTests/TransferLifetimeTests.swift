import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyWebAuthn
import Logging
import Testing

/// Transfers someone started without proving possession of the credential: anyone who
/// knows a credential ID can do that much, so such a transfer must not linger.
@Suite("Transfer lifetimes")
struct TransferLifetimeTests {
    @Test("an unopened transfer expires after a minute, not the transfer lifetime")
    func unopenedTransferExpires() async throws {
        let provider = try await Provider.inMemoryForTesting()
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

extension Provider {
    /// A provider over a fresh in-memory store, migrated and ready, without HTTP.
    static func inMemoryForTesting(_ configure: (inout ProviderConfiguration) -> Void = { _ in }) async throws -> Provider {
        var configuration = ProviderConfiguration(adminToken: "t")
        configure(&configuration)
        let store = try await ProviderStore.open(configuration, logger: Logger(label: "test"))
        let context = ProviderContext(configuration: configuration, database: store.database, storeKey: store.storeKey, logger: Logger(label: "test"))
        try await context.prepare()
        return Provider(context: context)
    }
}
