import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

/// The clients the provider knows: the configured ones (`ProviderConfiguration.clients`,
/// the built-in `latchkey-cli`) and those registered through the admin API, kept in the
/// `clients` table so every instance sees them (docs/PROTOCOL.md, "Clients").
struct ClientRegistry: Sendable {
    let context: ProviderContext

    /// Grants a registered client may hold.
    static let grants: [GrantType] = [.authorizationCode, .refreshToken, .clientCredentials, .deviceCode]
    /// Registered clients at most: each costs a row and a JWK Set.
    static let maximumClients = 10_000
    /// Keys in a client's JWK Set at most (rotation needs two; a few more for overlap).
    static let maximumKeys = 8

    /// The client with `id`; nil when none. An id that is a URL names a client by its
    /// metadata document (``ClientMetadataDocuments``), whose refusals are thrown with
    /// their reason.
    func client(_ id: String?) async throws -> RegisteredClient? {
        if let id, ClientMetadataDocuments.isURL(id) {
            return try await context.clientMetadata.client(id)
        }
        guard let id, ProtocolIdentifier.isValid(id, maximumLength: 128) else { return nil }
        if let configured = context.configuration.clients.first(where: { $0.id == id }) {
            return RegisteredClient(configured: configured)
        }
        guard let row = try await context.database.read({ transaction in
            try await transaction.first("SELECT id, name, jwks, grant_types AS grants, redirect_uris AS redirects, scopes, resources, registration, third_party FROM clients WHERE id = \(id)")
        }) else { return nil }
        return try Self.client(row)
    }

    /// Registers a client after checking everything a stranger with the admin token could
    /// get wrong: the id's characters, known grants only, keys that parse (only their
    /// public members are read and kept, so a pasted private key leaves nothing secret), redirect URIs that are absolute and fragment-free, scope tokens of RFC 6749
    /// §3.3. Throws `409 conflict` for a taken id.
    func create(_ registration: AdminAPI.Client, now: Date = ProviderClock.now) async throws -> AdminAPI.Client {
        let client = try Self.validated(registration)
        guard !context.configuration.clients.contains(where: { $0.id == client.id }) else {
            throw ProviderError.conflict("client id \(client.id) is the provider's own")
        }
        let jwks = try client.jwks.map { String(decoding: try TokenEndpoint.encode($0), as: UTF8.self) }
        let grants = client.grantTypes.joined(separator: " ")
        let redirects = client.redirectURIs.joined(separator: " ")
        let scopes = client.scopes.joined(separator: " ")
        let resources = client.resources?.joined(separator: " ")
        let registration = try ProviderContext.randomToken()
        try await context.database.transaction { transaction in
            let count = try await transaction.first("SELECT COUNT(*) AS registered FROM clients")?.decode("registered", as: Int64.self) ?? 0
            guard count < Self.maximumClients else {
                throw ProviderError.conflict("the provider holds \(Self.maximumClients) clients; delete one first")
            }
            let inserted = try await transaction.first("""
                INSERT INTO clients (id, name, jwks, grant_types, redirect_uris, scopes, resources, created_at, registration)
                VALUES (\(client.id), \(client.name), \(jwks), \(grants), \(redirects), \(scopes), \(resources), \(now), \(registration))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """)
            guard inserted != nil else { throw ProviderError.conflict("a client with id \(client.id) exists") }
            try await self.context.audit.record(AuditEntry(
                .clientCreated, actor: .admin, client: client.id, details: AuditEvent.Details(grantType: grants, scope: scopes.isEmpty ? nil : scopes), now: now
            ), in: transaction)
        }
        var created = client
        created.createdAt = AuditEvent.formatTime(now)
        return created
    }

    /// The registered clients, by id.
    func list() async throws -> [AdminAPI.Client] {
        try await context.database.transaction { transaction in
            try await transaction.query("""
                SELECT id, name, jwks, grant_types AS grants, redirect_uris AS redirects, scopes, resources, created_at, registration, third_party
                FROM clients ORDER BY id
                """)
                .map { row in
                    let client = try Self.client(row)
                    return AdminAPI.Client(
                        id: client.id, name: client.name, jwks: client.jwks, grantTypes: client.grantTypes.map(\.rawValue),
                        redirectURIs: client.redirectURIs, scopes: client.scopes ?? [], resources: client.resources, createdAt: AuditEvent.formatTime(try row.decode("created_at", as: Date.self))
                    )
                }
        }
    }

    /// Deletes a registered client and ends every grant issued to it, in one transaction:
    /// its own client-credentials tokens, every grant family begun for it (so its users'
    /// access tokens, refresh tokens and unredeemed codes stop at once, RFC 9700 §4.14's
    /// "revocation" of a grant), its device codes, waiting or approved, and its SSH
    /// principals. False when there was none. A client registered later under the same
    /// id has a new ``RegisteredClient/registration``, so nothing begun for this one
    /// passes as its.
    func delete(_ id: String, by actor: AuditEvent.Actor = .admin, now: Date = ProviderClock.now) async throws -> Bool {
        try await context.database.transaction { transaction in
            guard try await transaction.first("DELETE FROM clients WHERE id = \(id) RETURNING id") != nil else { return false }
            try await transaction.execute("DELETE FROM client_tokens WHERE client_id = \(id)")
            try await GrantLedger.revokeFamilies(ofClient: id, now: now, in: transaction)
            try await transaction.execute("DELETE FROM device_codes WHERE client_id = \(id)")
            // Its SSH principals: an id registered again starts with none. Its
            // certificates go on the KRL (their registration is gone).
            try await transaction.execute("DELETE FROM ssh_client_principals WHERE client_id = \(id)")
            try await HostAccessPolicy.forget(client: id, in: transaction)
            try await self.context.audit.record(AuditEntry(.clientDeleted, actor: actor, client: id, now: now), in: transaction)
            return true
        }
    }

    /// A client from a row of `clients` selected with `grant_types AS grants` and
    /// `redirect_uris AS redirects`.
    static func client(_ row: SQLRow) throws -> RegisteredClient {
        func words(_ column: String) throws -> [String] { try row.decode(column, as: String.self).split(separator: " ").map(String.init) }
        do {
            var client = try RegisteredClient(
                id: row.decode("id"), name: row.decode("name"), jwks: row.decode("jwks", as: String?.self).map { Data($0.utf8) },
                grantTypes: words("grants").map(GrantType.init(rawValue:)), redirectURIs: words("redirects"), scopes: words("scopes"),
                resources: row.decode("resources", as: String?.self).map { $0.split(separator: " ").map(String.init) },
                registration: row.decode("registration", as: String?.self)
            )
            client.thirdParty = try row.decode("third_party", as: Int64.self) != 0
            return client
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.corruptRow("clients.jwks of \(try row.decode("id", as: String.self)) is not a JWK Set", underlying: error)
        }
    }

    /// A registration with every field checked (see ``create(_:now:)``).
    static func validated(_ registration: AdminAPI.Client) throws -> AdminAPI.Client {
        func refuse(_ why: String) -> ProviderError { .badRequest(.invalidRequest, why) }
        guard ProtocolIdentifier.isValid(registration.id, maximumLength: 128),
              registration.id.unicodeScalars.allSatisfy({ $0.isASCII && $0.properties.isAlphabetic || ("0"..."9").contains($0) || "-._:".unicodeScalars.contains($0) })
        else { throw refuse("client id must be 1 to 128 letters, digits or -._:") }
        let name = registration.name.trimmingCharacters(in: .whitespaces)
        guard (1...128).contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw refuse("name must be 1 to 128 characters without control characters")
        }
        let grants = Array(Set(registration.grantTypes)).sorted()
        guard !grants.isEmpty, grants.allSatisfy({ grant in Self.grants.contains { $0.rawValue == grant } }) else {
            throw refuse("grantTypes must name one or more of " + Self.grants.map(\.rawValue).joined(separator: ", "))
        }
        if grants.contains(GrantType.clientCredentials.rawValue), registration.jwks == nil {
            throw refuse("client_credentials needs a JWK Set: a public client cannot authenticate (RFC 6749 §4.4)")
        }
        if grants.contains(GrantType.authorizationCode.rawValue), registration.redirectURIs.isEmpty {
            throw refuse("authorization_code needs at least one redirect URI")
        }
        guard registration.redirectURIs.count <= 16, registration.redirectURIs.allSatisfy(Self.isRedirectURI) else {
            throw refuse("redirectURIs must be at most 16 absolute http(s) URIs without a fragment or spaces")
        }
        guard registration.scopes.count <= 64, registration.scopes.allSatisfy(Self.isScopeToken) else {
            throw refuse("scopes must be at most 64 scope tokens (RFC 6749 §3.3: printable ASCII, no space, quote or backslash)")
        }
        var resources: [String]?
        if let asked = registration.resources {
            guard asked.count <= 64 else { throw refuse("resources must be at most 64 resource URIs") }
            do {
                resources = Array(Set(try asked.map { try ResourceIndicator($0).uri })).sorted()
            } catch {
                throw refuse("resources: \(error)")
            }
        }
        if let jwks = registration.jwks {
            guard (1...maximumKeys).contains(jwks.keys.count) else { throw refuse("jwks must hold 1 to \(maximumKeys) keys") }
            for key in jwks.keys {
                guard (try? VerifyingKey(jwk: key)) != nil, key.kty == "EC" || key.kty == "OKP" else {
                    throw refuse("jwks holds a key that is not a usable P-256 or Ed25519 public key")
                }
            }
            guard (try? JWKSet(json: TokenEndpoint.encode(jwks))) != nil else { throw refuse("jwks is not a usable JWK Set") }
        }
        return AdminAPI.Client(
            id: registration.id, name: name, jwks: registration.jwks, grantTypes: grants,
            redirectURIs: registration.redirectURIs, scopes: Array(Set(registration.scopes)).sorted(), resources: resources
        )
    }

    static func isRedirectURI(_ text: String) -> Bool {
        // An http(s) URL with a host is what has a web origin.
        guard text.utf8.count <= 512, !text.contains(" "), let url = URL(string: text), url.fragment == nil else { return false }
        return WebOrigin(url) != nil
    }

    /// RFC 6749 §3.3: `scope-token = 1*( %x21 / %x23-5B / %x5D-7E )`.
    static func isScopeToken(_ text: String) -> Bool {
        (1...128).contains(text.utf8.count) && text.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }
}
