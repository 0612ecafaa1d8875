import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// Certificates for services (docs/PROTOCOL.md section 12): a client's own client
/// credentials token (RFC 6749 §4.4) of scope `ssh` gets a certificate only for the
/// principals an admin granted that client, on a key of its own; deleting the client puts
/// its certificates on the KRL, and a client registered again under the id inherits
/// nothing. And migration 13 keeps every certificate and key holder of schema 12.
@Suite("Provider: SSH certificates for clients (client credentials)")
struct SSHClientCertificateTests {
    static let clientID = "deploy-bot"

    /// Registers `id` with `signer`'s key for client credentials and `scopes`.
    static func register(_ issuer: URL, _ id: String, _ signer: ClientAssertionSigner, scopes: [String]) async throws {
        let jwks = try JSONDecoder().decode(JWKSDocument.self, from: signer.publicJWKSet)
        let reply = try await ProviderTests.admin(issuer).call(
            AdminAPI.createClient, body: AdminAPI.Client(id: id, jwks: jwks, grantTypes: ["client_credentials"], scopes: scopes)
        )
        try #require(reply.status == 201, "\(String(decoding: reply.body, as: UTF8.self))")
    }

    /// A client credentials access token for `id`.
    static func token(_ issuer: URL, _ id: String, _ signer: ClientAssertionSigner, scopes: [String]) async throws -> String {
        let client = try OAuthClient(configuration: .init(
            issuer: issuer, clientID: id, redirectURI: try ProviderHarness.callback, authentication: .privateKeyJWT(signer, audience: .issuer)
        ))
        return try await client.clientCredentials(scopes: scopes).accessToken
    }

    static func grant(_ issuer: URL, _ id: String, _ principals: [String]) async throws -> Int {
        try await ProviderTests.admin(issuer).call(AdminAPI.setClientSSHPrincipals, id, body: .init(principals: principals)).status
    }

    @Test("a client's own token gets a certificate for the principals an admin granted it, none before; its key id and event name the client; a token without ssh is insufficient_scope; its key is no person's", arguments: TestStore.available)
    func clientCertificates(engine: TestStore) async throws {
        try await SSHAuthorityTests.withCA(engine) { issuer, authenticator in
            let signer = try ClientAssertionSigner(key: SigningKey.generate(.es256))
            try await Self.register(issuer, Self.clientID, signer, scopes: ["ssh", "backup"])
            let token = try await Self.token(issuer, Self.clientID, signer, scopes: ["ssh"])
            let key = try SigningKey.generate(.ed25519)

            // Nothing granted yet: no principal to name.
            let (refused, _, refusedError, _) = try await SSHAuthorityTests.post(issuer, try SSHAuthorityTests.request(issuer, key: key, accessToken: token), token: token)
            #expect(refused == 403 && refusedError == "principal_not_granted")
            #expect(try await Self.grant(issuer, Self.clientID, ["deploy", "deploy"]) == 200)
            let granted = try await AuditLogTests.events(issuer, type: AuditEventType.sshPrincipalsGranted.rawValue)
            #expect(granted.count == 1 && granted.first?.client == Self.clientID && granted.first?.details?.principals == ["deploy"] && granted.first?.actor.kind == .admin)

            let (status, issued, error, _) = try await SSHAuthorityTests.post(issuer, try SSHAuthorityTests.request(issuer, key: key, accessToken: token), token: token)
            try #require(status == 201, "\(error ?? "-")")
            let answer = try #require(issued)
            let certificate = try SSHCertificate(openSSHLine: answer.certificate)
            let sshKey = try SSHPublicKey(key.publicKey)
            #expect(certificate.principals == ["deploy"] && certificate.kind == .user && certificate.publicKey == sshKey)
            #expect(answer.keyID == "latchkey client=\(Self.clientID) serial=\(answer.serial)" && answer.certificate.hasSuffix(" \(Self.clientID)"))
            let events = try await AuditLogTests.events(issuer, type: AuditEventType.sshCertificateIssued.rawValue)
            #expect(events.count == 1 && events.first?.actor == .client(Self.clientID) && events.first?.subject == nil && events.first?.client == Self.clientID)
            #expect(events.first?.details?.credential == nil && events.first?.details?.principals == ["deploy"])

            // A principal the client was not granted.
            let (other, _, otherError, _) = try await SSHAuthorityTests.post(
                issuer, try SSHAuthorityTests.request(issuer, key: key, accessToken: token, principals: ["root"]), token: token
            )
            #expect(other == 403 && otherError == "principal_not_granted")
            // The client's token without the ssh scope.
            let backup = try await Self.token(issuer, Self.clientID, signer, scopes: ["backup"])
            let (scoped, _, scopedError, _) = try await SSHAuthorityTests.post(issuer, try SSHAuthorityTests.request(issuer, key: key, accessToken: backup), token: backup)
            #expect(scoped == 403 && scopedError == "insufficient_scope")
            // The client's key presented by a person, and a person's key by the client.
            let (_, person) = try await SSHAuthorityTests.tokens(issuer, authenticator)
            let (taken, _, takenError, _) = try await SSHAuthorityTests.post(
                issuer, try SSHAuthorityTests.request(issuer, key: key, accessToken: person.accessToken), token: person.accessToken
            )
            #expect(taken == 409 && takenError == "invalid_ssh_key")
            let personKey = try SigningKey.generate(.es256)
            let (mine, _, mineError, _) = try await SSHAuthorityTests.post(
                issuer, try SSHAuthorityTests.request(issuer, key: personKey, accessToken: person.accessToken), token: person.accessToken
            )
            #expect(mine == 201, "\(mineError ?? "-")")
            let (stolen, _, stolenError, _) = try await SSHAuthorityTests.post(issuer, try SSHAuthorityTests.request(issuer, key: personKey, accessToken: token), token: token)
            #expect(stolen == 409 && stolenError == "invalid_ssh_key")
            // Principals for a client that is not registered, or with a comma.
            #expect(try await Self.grant(issuer, "nobody", ["deploy"]) == 404)
            #expect(try await Self.grant(issuer, Self.clientID, ["a,b"]) == 400)
            #expect(try await AuditLogTests.events(issuer, type: AuditEventType.sshCertificateIssued.rawValue).count == 2)
        }
    }

    @Test("deleting the client puts its unexpired certificates on the KRL (ssh-keygen -Q agrees), and a client registered again under its id has no principals and its old certificates stay revoked", arguments: TestStore.available)
    func deletedClient(engine: TestStore) async throws {
        try await SSHAuthorityTests.withCA(engine) { issuer, _ in
            let signer = try ClientAssertionSigner(key: SigningKey.generate(.es256))
            try await Self.register(issuer, Self.clientID, signer, scopes: ["ssh"])
            #expect(try await Self.grant(issuer, Self.clientID, ["deploy"]) == 200)
            let token = try await Self.token(issuer, Self.clientID, signer, scopes: ["ssh"])
            let key = try SigningKey.generate(.es256)
            let (_, issued, _, _) = try await SSHAuthorityTests.post(issuer, try SSHAuthorityTests.request(issuer, key: key, accessToken: token), token: token)
            let directory = try TemporaryDirectory()
            let certificateFile = directory.url.appendingPathComponent("bot-cert.pub")
            try Data((try #require(issued).certificate + "\n").utf8).write(to: certificateFile)
            func revoked() async throws -> Bool {
                let list = try await SSHAuthorityTests.get(issuer, ProtocolPath.sshRevocations)
                let file = directory.url.appendingPathComponent("krl")
                try list.body.write(to: file)
                let status = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh-keygen"), ["-Q", "-f", file.path, certificateFile.path]).status
                return status == 1
            }
            #expect(try await revoked() == false)
            #expect(try await ProviderTests.admin(issuer).call(AdminAPI.deleteClient, Self.clientID).status == 200)
            #expect(try await revoked() == true, "revoked with its client")

            // The id registered again, by someone else's key: nothing carries over.
            let newSigner = try ClientAssertionSigner(key: SigningKey.generate(.es256))
            try await Self.register(issuer, Self.clientID, newSigner, scopes: ["ssh"])
            #expect(try await revoked() == true, "still revoked: another registration")
            let newToken = try await Self.token(issuer, Self.clientID, newSigner, scopes: ["ssh"])
            let (status, _, error, _) = try await SSHAuthorityTests.post(
                issuer, try SSHAuthorityTests.request(issuer, key: try SigningKey.generate(.ed25519), accessToken: newToken), token: newToken
            )
            #expect(status == 403 && error == "principal_not_granted", "the old client's principals are gone")
        }
    }

    @Test("migration 13 keeps every certificate and key holder a store of schema 12 had, and their KRL", arguments: TestStore.available)
    func migrationKeepsCertificates(engine: TestStore) async throws {
        try await engine.with { storage, key in
            var configuration = ProviderConfiguration(adminToken: "t")
            configuration.storage = storage
            configuration.storeKey = key
            try await Provider.closing(configuration) { provider in
                try await provider.context.prepare()
                let database = provider.context.database
                // The store as schema 12 left it, with one certificate and its key holder.
                try await database.transaction { transaction in
                    for table in ["ssh_certificates", "ssh_key_holders", "ssh_principals", "ssh_client_principals"] {
                        try await transaction.execute(SQLStatement(stringLiteral: "DROP TABLE \(table)"))
                    }
                    for statement in Migrations.ddl(Migrations.steps[11], database.dialect) {
                        try await transaction.execute(SQLStatement(stringLiteral: statement))
                    }
                    try await transaction.execute("""
                        INSERT INTO ssh_certificates (serial, identity_id, credential_id, client_id, key_fingerprint, principals, valid_after, valid_before, issued_at)
                        VALUES (\(Int64(42)), 'identity-1', \(Data([1, 2, 3])), 'latchkey-cli', 'SHA256:abc', 'ada', \(Date()), \(Date().addingTimeInterval(3600)), \(Date()))
                        """)
                    try await transaction.execute("INSERT INTO ssh_key_holders (key_fingerprint, identity_id, first_certified_at) VALUES ('SHA256:abc', 'identity-1', \(Date()))")
                    try await transaction.execute("INSERT INTO ssh_principals (identity_id, principal) VALUES ('identity-1', 'deploy')")
                    // Without what steps 14, 16, 17 and 18 added.
                    try await transaction.execute("ALTER TABLE device_codes DROP COLUMN host_login")
                    for statement in [
                        "DROP INDEX audit_events_nonce", "ALTER TABLE audit_events DROP COLUMN nonce", "ALTER TABLE audit_pending DROP COLUMN nonce",
                        "DROP TABLE ssh_ca_keys",
                    ] {
                        try await transaction.execute(SQLStatement(stringLiteral: statement))
                    }
                    try await ResourceIndicatorSchema.drop(in: transaction)
                    try await FleetSchema.drop(in: transaction)
                    try await transaction.execute("UPDATE latchkey_schema SET version = 12")
                }
                try await Migrations.run(on: database)
                let (certificates, holders, principals) = try await database.read { transaction in
                    (
                        try await transaction.query("SELECT serial, identity_id, credential_id, client_id, client_registration, principals FROM ssh_certificates"),
                        try await transaction.query("SELECT identity_id, client_id FROM ssh_key_holders WHERE key_fingerprint = 'SHA256:abc'"),
                        try await transaction.query("SELECT principal FROM ssh_principals WHERE identity_id = 'identity-1'")
                    )
                }
                #expect(certificates.count == 1 && holders.count == 1 && principals.count == 1)
                let row = try #require(certificates.first)
                #expect(try row.decode("serial", as: Int64.self) == 42 && row.decode("identity_id", as: String?.self) == "identity-1")
                #expect(try row.decode("credential_id", as: Data?.self) == Data([1, 2, 3]) && row.decode("client_registration", as: String?.self) == nil)
                #expect(try holders.first?.decode("client_id", as: String?.self) == nil && holders.first?.decode("identity_id", as: String?.self) == "identity-1")
                // Its identity and credential do not exist: the certificate is on the KRL.
                #expect(try await SSHAuthority(context: provider.context).revokedSerials() == [42])
            }
        }
    }
}
