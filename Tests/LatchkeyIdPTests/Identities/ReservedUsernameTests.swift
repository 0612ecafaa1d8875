import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// Names a Linux host keeps for itself (docs/SECURITY.md, "Reserved names"): no identity
/// takes one by any door, and a username that is one is never a certificate principal
/// unless an admin granted that exact principal. The red team's first finding: a stranger
/// signed up as `root` and got a certificate `sshd` let in as uid 0.
@Suite("Reserved usernames")
struct ReservedUsernameTests {
    @Test("root, Debian's system accounts and groups, their look-alikes, _ and systemd- names, and the operator's own are reserved; ordinary names are not")
    func reservedSet() {
        let reserved = ReservedUsernames(adding: ["Deploy-Admin"])
        for name in [
            "root", "Root", "ＲＯＯＴ", "r\u{043E}\u{043E}t", "r00t", "daemon", "www-data", "sudo", "adm", "adrn", "nobody", "_apt", "_chrony",
            "systemd-network", "wheel", "docker", "deploy-admin", "DEPLOY-ADMIN",
        ] {
            #expect(reserved.contains(name), "\(name) should be reserved")
        }
        for name in ["ada", "rooty", "grace", "ops-root", "binary", "user_01", "deploy"] {
            #expect(!reserved.contains(name), "\(name) should be free")
        }
    }

    @Test("sign-up, recovery and an admin's create refuse a reserved name with reserved_username, and nothing is created or mailed", arguments: TestStore.available)
    func everyDoor(engine: TestStore) async throws {
        try await ProviderHarness.run(engine, {
            $0.selfRegistration = true
            $0.reservedUsernames = ReservedUsernames(adding: ["deploy"])
        }) { provider in
            for name in ["root", "Root", "ＲＯＯＴ", "r00t", "_apt", "systemd-coredump", "deploy", "www-data"] {
                let created = try await provider.admin.call(AdminAPI.createIdentity, body: .init(username: name, email: "x@example.com"))
                #expect(created.status == 400 && created.refusal?.error == .reservedUsername, "create \(name): \(created.status)")
                for path in [ProtocolPath.signUp, ProtocolPath.recovery] {
                    let (status, answer) = try await ProviderTests.request(
                        "POST", provider.issuer.appendingPathComponent(path), json: try JSONEncoder().encode(EnrollmentExchange.Start(username: name))
                    )
                    #expect(status == 400 && answer["error"]?.stringValue == "reserved_username", "\(path) \(name): \(status) \(answer)")
                }
            }
            let identities = try await provider.admin.call(AdminAPI.listIdentities)
            #expect(identities.answer?.identities.isEmpty == true)
            #expect(try await provider.outbox().isEmpty)
            #expect(try await provider.auditEvents().filter { $0.type == .identityCreated || $0.type == .signUpCompleted }.isEmpty)
        }
    }

    @Test("an identity that holds a reserved name from before gets no certificate for it, until an admin grants that exact principal", arguments: TestStore.available)
    func heldFromBefore(engine: TestStore) async throws {
        try await engine.with { storage, key in
            // A store from before the rule: an identity called root, inserted as it was.
            var configuration = ProviderConfiguration(adminToken: "t")
            configuration.storage = storage
            configuration.storeKey = key
            let identity = UUID().uuidString.lowercased()
            try await Provider.closing(configuration) { provider in
                try await provider.context.prepare()
                try await provider.context.database.transaction { transaction in
                    try await transaction.execute("""
                        INSERT INTO identities (id, username, username_key, username_skeleton, email, display_name, created_at)
                        VALUES (\(identity), 'root', 'root', \(Username.skeleton("root")), 'root@example.com', 'root', \(Date()))
                        """)
                }
            }
            try await ProviderHarness.run(nil, {
                $0.storage = storage
                $0.storeKey = key
                $0.sshAuthority = true
            }) { provider in
                let issuer = provider.issuer
                let authenticator = try ProviderTests.newAuthenticator(provider.directory.url.appendingPathComponent("device"))
                let bindURL = try await provider.bindURL(for: identity)
                let (_, job) = try await ProviderTests.request("GET", bindURL)
                let options = try PublicKeyCredentialCreationOptionsJSON(json: job.json())
                let (registration, _) = try authenticator.makeCredential(options, origin: ProviderTests.origin(issuer))
                let (bound, _) = try await ProviderTests.request("POST", try ProviderTests.url(job["submit"]?.stringValue), json: try registration.json())
                try #require(bound == 201)
                let tokens = try await ProviderTests.signIn(issuer, authenticator, client: try ProviderTests.client(issuer), scopes: ["openid", "ssh"])

                let key = try SigningKey.generate(.ed25519)
                for principals in [nil, ["root"]] as [[String]?] {
                    let request = try SSHAuthorityTests.request(issuer, key: key, accessToken: tokens.accessToken, principals: principals)
                    try await SSHAuthorityTests.expectRefused(issuer, request, token: tokens.accessToken, status: 403, code: "principal_not_granted", "\(principals ?? [])")
                }
                let granted = try await provider.admin.call(AdminAPI.setSSHPrincipals, identity, body: .init(principals: ["root"]))
                #expect(granted.status == 200 && granted.answer?.principals == ["root"])
                let request = try SSHAuthorityTests.request(issuer, key: key, accessToken: tokens.accessToken)
                let (status, issued, error, _) = try await SSHAuthorityTests.post(issuer, request, token: tokens.accessToken)
                #expect(status == 201 && issued?.principals == ["root"], "\(status) \(error ?? "-")")
            }
        }
    }
}
