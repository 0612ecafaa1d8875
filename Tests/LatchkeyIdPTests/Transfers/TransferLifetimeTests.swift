import Foundation
import LatchkeyOAuth
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyWebAuthn
import Testing

/// Transfers someone started without proving possession of the credential: anyone who
/// knows a credential ID can do that much, so such a start must leave nothing behind
/// (docs/SECURITY.md, "Limits").
@Suite("Transfer lifetimes")
struct TransferLifetimeTests {
    @Test("an unopened transfer stores nothing, and its ticket dies after a minute")
    func unopenedTransferStoresNothing() async throws {
        try await Provider.withInMemoryStore(Self.check)
    }

    static func check(_ provider: Provider) async throws {
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
        for _ in 0..<50 {
            _ = try await provider.transfers.begin(credentialID: credentialID)
        }
        let (id, ticket, options) = try await provider.transfers.begin(credentialID: credentialID)
        #expect(try await provider.transfers.state(id) == nil)
        let rows = try await provider.context.database.transaction { try await $0.first("SELECT count(*) AS transfers FROM transfers")?.decode("transfers", as: Int64.self) }
        #expect(rows == 0)

        // Past its minute, the ticket opens nothing; the assertion is not even looked at.
        let rawID = Base64URL.encode(credentialID)
        let response = try AuthenticationResponseJSON(json: JSONValue.object([
            "id": .string(rawID), "rawId": .string(rawID), "type": "public-key",
            "response": ["clientDataJSON": "e30", "authenticatorData": "AAAA", "signature": "AAAA"], "clientExtensionResults": [:],
        ]).json())
        #expect(options.allowCredentials?.first?.id.data == credentialID)
        await #expect(throws: ProviderError.self) {
            try await provider.transfers.open(id, ticket: ticket, response: response, now: Date().addingTimeInterval(Transfers.unopenedTransferLifetime + 1))
        }
        // Nor does another transfer's id, or a sign-in ticket.
        await #expect(throws: ProviderError.self) {
            try await provider.transfers.open("another", ticket: ticket, response: response)
        }
        #expect(try await provider.transfers.state(id) == nil)
    }
}
