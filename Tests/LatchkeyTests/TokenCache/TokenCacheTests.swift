import Foundation
@testable import Latchkey
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing
import LatchkeyIdP

/// Tokens kept in the vault, DPoP-bound sign-ins and the calls that present tokens, with
/// the reference provider in-process and real vaults (issue 21).
@Suite("Token cache and DPoP in the facade")
struct TokenCacheTests {
    static func valid(
        _ embedded: Embedded, _ provider: ProviderHarness, _ proofOfPossession: ProofOfPossession? = .dpop, minimumValidity: TimeInterval = 30
    ) async throws -> Tokens {
        try await embedded.validTokens(
            issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: try ProviderHarness.callback,
            proofOfPossession: proofOfPossession, minimumValidity: minimumValidity
        )
    }

    static func signCount(_ embedded: Embedded) async throws -> UInt32 {
        try #require(try await embedded.credentials().first).signCount
    }

    /// Every byte of every file under `directory`.
    static func allFileBytes(_ directory: URL) throws -> Data {
        var all = Data()
        let files = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil))
        for case let file as URL in files where !file.hasDirectoryPath {
            all += (try? Data(contentsOf: file)) ?? Data()
        }
        return all
    }

    @Test("validTokens: one sign-in with dpop_jkt, then cached tokens; refreshed near expiry with the same key; a refused refresh signs in again; nothing in clear on disk")
    func cachedAndRefreshed() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let recording = RecordingTransport()
            // The redirect flow, whose authorization request carries dpop_jkt (the
            // challenge flow binds by the DPoP header instead: AuthorizationChallengeTests).
            let embedded = try vault.embedded(allowing: [provider.host], transport: recording) { $0.signInFlow = .redirect }
            let bound = try await embedded.registerCredential(from: try await provider.createIdentity().bindURL)

            let first = try await Self.valid(embedded, provider)
            let signer = try #require(first.dpop)
            #expect(first.tokenType == "DPoP" && first.credentialID == bound.credential.id)
            let authorize = try #require(recording.requests.first { $0.url.path.hasSuffix("/authorize") })
            let query = URLComponents(url: authorize.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
            #expect(query.first { $0.name == "dpop_jkt" }?.value == signer.thumbprint, "RFC 9449 §10: the authorization request names the key")
            #expect(try await Self.signCount(embedded) == 1)

            // Cached: the same tokens, here and from another instance on the vault.
            #expect(try await Self.valid(embedded, provider).accessToken == first.accessToken)
            let other = try vault.embedded(allowing: [provider.host])
            let fromOther = try await Self.valid(other, provider)
            #expect(fromOther.accessToken == first.accessToken && fromOther.dpop?.thumbprint == signer.thumbprint)
            #expect(try await Self.signCount(embedded) == 1, "no second sign-in")

            // Less left than asked for: refreshed, bound to the same key, and kept.
            let refreshed = try await Self.valid(embedded, provider, minimumValidity: 86_400)
            #expect(refreshed.accessToken != first.accessToken && refreshed.refreshToken != first.refreshToken)
            #expect(refreshed.tokenType == "DPoP" && refreshed.dpop?.thumbprint == signer.thumbprint)
            #expect(try await Self.valid(other, provider).accessToken == refreshed.accessToken)
            #expect(try await Self.signCount(embedded) == 1, "a refresh is no sign-in")

            // The provider's userinfo through transport(for:) and through authorize(request:with:).
            let userinfo = provider.issuer.appendingPathComponent("userinfo")
            let viaTransport = try await embedded.transport(for: refreshed).send(TransportRequest(method: "GET", url: userinfo))
            #expect(viaTransport.status == 200, "\(String(decoding: viaTransport.body, as: UTF8.self))")
            let signed = try embedded.authorize(request: TransportRequest(method: "GET", url: userinfo), with: refreshed)
            #expect(signed.headers["Authorization"] == "DPoP \(refreshed.accessToken)" && signed.headers["DPoP"] != nil)
            #expect(try await HTTP1Transport().send(signed).status == 200)

            // Nothing kept is readable on disk.
            let disk = try Self.allFileBytes(vault.directory)
            for secret in [refreshed.accessToken, try #require(refreshed.refreshToken), try #require(refreshed.idToken)] {
                #expect(disk.range(of: Data(secret.utf8)) == nil, "a token is in a vault file in clear")
            }

            // The access token alone revoked: the kept one is refused at the resource
            // (a DPoP challenge naming invalid_token); handed back as rejected, it is
            // refreshed, not signed in again.
            try await provider.oauthClient().revoke(refreshed.accessToken, hint: .accessToken)
            let refused = try await embedded.transport(for: refreshed).send(TransportRequest(method: "GET", url: userinfo))
            #expect(refused.status == 401 && refused.headers["www-authenticate"]?.hasPrefix("DPoP error=\"invalid_token\"") == true, "\(refused.headers)")
            #expect(try await Self.valid(embedded, provider).accessToken == refreshed.accessToken, "still valid as far as the cache knows")
            let renewed = try await embedded.validTokens(
                issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: try ProviderHarness.callback, rejected: refreshed
            )
            #expect(renewed.accessToken != refreshed.accessToken && renewed.dpop?.thumbprint == signer.thumbprint)
            #expect(try await embedded.transport(for: renewed).send(TransportRequest(method: "GET", url: userinfo)).status == 200)
            #expect(try await Self.signCount(embedded) == 1)

            // The grant revoked at the provider behind the cache's back: the refresh is
            // refused (invalid_grant), the kept tokens forgotten, and validTokens signs in.
            try await provider.oauthClient().revoke(try #require(renewed.refreshToken), hint: .refreshToken)
            let again = try await Self.valid(embedded, provider, minimumValidity: 86_400)
            #expect(again.accessToken != renewed.accessToken && again.dpop?.thumbprint == signer.thumbprint)
            #expect(try await Self.signCount(embedded) == 2)

            // Revoked through the facade: forgotten at once, so the next call signs in
            // without trying a refresh.
            try await embedded.revoke(again)
            let afterRevoke = try await Self.valid(embedded, provider)
            let countAfterRevoke = try await Self.signCount(embedded)
            #expect(afterRevoke.accessToken != again.accessToken && countAfterRevoke == 3)

            // Deleting the credential deletes its DPoP key and kept tokens.
            #expect(try await embedded.deleteCredential(id: bound.credential.id))
            let records = try FileManager.default.contentsOfDirectory(atPath: vault.directory.appendingPathComponent("vault/keys").path)
            #expect(records.isEmpty, "left behind: \(records)")
        }
    }

    @Test("several instances on one vault asking at once sign in once and share the tokens")
    func singleFlight() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            _ = try await embedded.registerCredential(from: try await provider.createIdentity().bindURL)
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<4 {
                    let instance = try vault.embedded(allowing: [provider.host])
                    group.addTask { try await Self.valid(instance, provider).accessToken }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(tokens.count == 1)
            #expect(try await Self.signCount(embedded) == 1)
        }
    }

    @Test("bearer tokens are kept too; asking for DPoP then signs in again, bound; logout revokes and forgets")
    func bearerThenDPoPThenLogout() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            _ = try await embedded.registerCredential(from: try await provider.createIdentity().bindURL)
            let bearer = try await Self.valid(embedded, provider, nil)
            #expect(bearer.tokenType == "Bearer" && bearer.dpop == nil)
            #expect(try await Self.valid(embedded, provider, ProofOfPossession.none).accessToken == bearer.accessToken)
            let bound = try await Self.valid(embedded, provider, .dpop)
            let countAfterBound = try await Self.signCount(embedded)
            #expect(bound.tokenType == "DPoP" && countAfterBound == 2)
            // The newest kept sign-in answers a caller that does not ask for DPoP.
            #expect(try await Self.valid(embedded, provider, nil).accessToken == bound.accessToken)

            let logout = try await embedded.logout(issuer: provider.issuer)
            #expect(logout.forgotten == 1 && logout.revocationFailures.isEmpty)
            let refused = await #expect(throws: LatchkeyError.self) { try await embedded.refresh(bound) }
            #expect(refused?.providerError?.error == .invalidGrant, "revoked at the provider")
            let after = try await Self.valid(embedded, provider)
            let countAfterLogout = try await Self.signCount(embedded)
            #expect(after.accessToken != bound.accessToken && countAfterLogout == 3)
            #expect(try await embedded.logout(issuer: provider.issuer, clientID: "another-client").forgotten == 0)
        }
    }

    @Test("the DPoP key record an instance kept tokens in, deleted behind its back: the next sign-in keeps its tokens in a new one")
    func keptRecordDeleted() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            _ = try await embedded.registerCredential(from: try await provider.createIdentity().bindURL)
            _ = try await Self.valid(embedded, provider, nil)
            let records = try embedded.dpopKeys.dpopKeyRecords()
            #expect(records.count == 1 && records.first?.record.tokens.count == 1)
            try embedded.authenticator.vault.deleteKey(try #require(records.first).entry.handle)

            let again = try await Self.valid(embedded, provider, nil)
            #expect(try await Self.signCount(embedded) == 2)
            let renewed = try embedded.dpopKeys.dpopKeyRecords()
            #expect(renewed.count == 1 && renewed.first?.entry.handle != records.first?.entry.handle)
            #expect(renewed.first?.record.tokens.first?.accessToken == again.accessToken)
            #expect(try await Self.valid(embedded, provider, nil).accessToken == again.accessToken)
            #expect(try await Self.signCount(embedded) == 2, "kept: no third sign-in")
        }
    }

    @Test("cachesTokens off: nothing is kept, each validTokens signs in")
    func cacheOff() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host], configure: { $0.cachesTokens = false })
            _ = try await embedded.registerCredential(from: try await provider.createIdentity().bindURL)
            _ = try await Self.valid(embedded, provider, nil)
            _ = try await Self.valid(embedded, provider, nil)
            #expect(try await Self.signCount(embedded) == 2)
        }
    }

    @Test("a provider that requires DPoP nonces: sign-in, refresh and userinfo go through the nonce dance")
    func providerNonces() async throws {
        try await ProviderHarness.withVault({ $0.requiresDPoP = true; $0.requiresDPoPNonce = true }) { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host], configure: { $0.proofOfPossession = .dpop })
            _ = try await embedded.registerCredential(from: try await provider.createIdentity().bindURL)
            let tokens = try await Self.valid(embedded, provider, nil)
            #expect(tokens.tokenType == "DPoP")
            let refreshed = try await embedded.refresh(tokens)
            #expect(refreshed.dpop?.thumbprint == tokens.dpop?.thumbprint)
            let response = try await embedded.transport(for: refreshed).send(TransportRequest(method: "GET", url: provider.issuer.appendingPathComponent("userinfo")))
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        }
    }

    @Test("a credential keeps at most 8 sign-ins, newest last, and never more than a record's metadata may hold")
    func keptEntriesAreBounded() throws {
        let callback = try ProviderHarness.callback
        let issuer = try #require(URL(string: "https://id.example.com"))
        func tokens(_ client: String, size: Int = 32) -> Tokens {
            let set = TokenSet(
                accessToken: String(repeating: "a", count: size), tokenType: "Bearer", expiresAt: nil, refreshToken: "r", scope: nil, idToken: nil, idTokenClaims: nil
            )
            return Tokens(tokenSet: set, issuer: issuer, clientID: client, redirectURI: callback)
        }
        var record = DPoPKeyRecord(owner: try #require(KeyHandle(rawValue: "0123456789abcdef0123456789abcdef")).rawValue)
        for index in 0..<12 { _ = try record.keep(CachedTokens(tokens("client-\(index)"), issuer: issuer.absoluteString, scopes: [])) }
        #expect(record.tokens.map(\.clientID) == (4..<12).map { "client-\($0)" })
        // The same client again replaces its entry and becomes the newest.
        _ = try record.keep(CachedTokens(tokens("client-5"), issuer: issuer.absoluteString, scopes: []))
        #expect(record.tokens.count == 8 && record.tokens.last?.clientID == "client-5")
        // Entries that together outgrow a record's metadata push the oldest out.
        let data = try record.keep(CachedTokens(tokens("large", size: 40_000), issuer: issuer.absoluteString, scopes: []))
        _ = try record.keep(CachedTokens(tokens("larger", size: 20_000), issuer: issuer.absoluteString, scopes: []))
        #expect(data.count <= KeyVault.maximumMetadataByteCount)
        #expect(try record.encoded().count <= KeyVault.maximumMetadataByteCount && record.tokens.last?.clientID == "larger")
    }

    @Test("the token cache's record reads back what Codable wrote, and Codable reads what it writes, an ID token's claims included")
    func recordEncoding() throws {
        let callback = try ProviderHarness.callback
        let issuer = try #require(URL(string: "https://id.example.com/a/b"))
        let set = TokenSet(accessToken: "at/+=", tokenType: "DPoP", expiresAt: nil, refreshToken: nil, scope: nil, idToken: nil, idTokenClaims: nil)
        var signIn = CachedTokens(Tokens(tokenSet: set, issuer: issuer, clientID: "cli\"ent", redirectURI: callback), issuer: issuer.absoluteString, scopes: ["openid", "x\"y\u{7}"])
        signIn.claims = [
            "sub": .string("alice"), "aud": .array([.string("a"), .string("b/c")]), "exp": .number(1_796_000_000), "auth_time": .number(1.5),
            "tiny": .number(1e-7), "huge": .number(1e300), "nested": .object(["t": .bool(true), "f": .bool(false), "n": .null, "deep": .array([.object([:]), .array([])])]),
            "\u{E9}\"\\": .string("\u{0}\u{1B}[2J\u{202E}"), "B": .string(""), "a": .string("</script>"),
        ]
        signIn.expiresAt = 1_796_000_000.25
        signIn.idToken = "h.p.s"
        signIn.scope = "openid"
        signIn.refreshToken = "rt"
        let own = CachedTokens(clientCredentials: Tokens(tokenSet: set, issuer: issuer, clientID: "service", redirectURI: callback), issuer: issuer.absoluteString, scopes: ["b", "a"])
        var record = DPoPKeyRecord(owner: "0123456789abcdef0123456789abcdef")
        record.tokens = [signIn, own]
        func codable(_ record: DPoPKeyRecord) throws -> Data {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return try encoder.encode(record)
        }
        let written = try codable(record)
        #expect(try codable(try #require(DPoPKeyRecord.decode(written))) == written)
        #expect(try codable(try JSONDecoder().decode(DPoPKeyRecord.self, from: try record.encoded())) == written)
        #expect(try codable(try #require(DPoPKeyRecord.decode(try record.encoded()))) == written)
        // Not a DPoP key record, or one missing what an entry needs: nil, as before.
        let text = String(decoding: try record.encoded(), as: UTF8.self)
        for broken in [
            text.replacingOccurrences(of: #""kind":"dpop""#, with: #""kind":"webauthn""#),
            text.replacingOccurrences(of: #""accessToken":"at/+=","#, with: ""),
            text.replacingOccurrences(of: #""storedAt":"#, with: #""storedAt":"x","y":"#),
            text.replacingOccurrences(of: #""claims":{"#, with: #""claims":[],"z":{"#),
            "{}", "",
        ] {
            #expect(broken != text)
            #expect(DPoPKeyRecord.decode(Data(broken.utf8)) == nil, "\(broken)")
        }
    }
}
