import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

/// Resource servers: those allowed to introspect tokens (RFC 7662 §2.1: the endpoint is
/// not open, or anyone could test stolen tokens against it), and the resources clients
/// may ask tokens for (RFC 8707). Each has an id and a 256-bit secret made by the admin
/// API (only the secret's SHA-256 is stored) and, when it names one, its resource URI:
/// the audience of the tokens asked for it, and the only tokens it is told are active.
struct ResourceServers: Sendable {
    let context: ProviderContext

    /// A resource server that authenticated at the introspection endpoint.
    struct Authenticated: Sendable {
        var id: String
        /// Its resource (canonical, ``ResourceIndicator``); nil for a server registered
        /// without one, which sees only tokens that name no resource.
        var resource: String?
    }

    /// How the tokens of a resource are written.
    enum AccessTokenFormat: String, Sendable {
        /// A random string the server introspects (RFC 7662).
        case opaque
        /// A JWT access token (RFC 9068) the server checks offline (``JWTAccessTokens``).
        case jwt
    }

    /// Creates one; returns its id and secret (shown once) and its resource as kept.
    func create(
        name: String, resource: String? = nil, format: String? = nil, now: Date = ProviderClock.now
    ) async throws -> (id: String, secret: String, resource: String?, format: AccessTokenFormat) {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard (1...128).contains(trimmed.count), !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ProviderError.badRequest(.invalidRequest, "name must be 1 to 128 characters without control characters")
        }
        let canonical: String?
        do {
            canonical = try resource.map { try ResourceIndicator($0).uri }
        } catch {
            throw ProviderError.badRequest(.invalidRequest, "\(error)")
        }
        guard let chosen = format.map(AccessTokenFormat.init(rawValue:)) ?? .opaque else {
            throw ProviderError.badRequest(.invalidRequest, "accessTokenFormat must be jwt or opaque")
        }
        guard chosen == .opaque || canonical != nil else {
            throw ProviderError.badRequest(.invalidRequest, "JWT access tokens need a resource: it is their audience (RFC 9068 §3)")
        }
        let id = "rs-" + (try ProviderContext.randomToken())
        let secret = try ProviderContext.randomToken()
        try await context.database.transaction { transaction in
            if let canonical, try await transaction.first("SELECT id FROM resource_servers WHERE resource = \(canonical)") != nil {
                throw ProviderError.conflict("a resource server for \(canonical) exists")
            }
            try await transaction.execute("""
                INSERT INTO resource_servers (id, name, secret_hash, created_at, resource, access_token_format)
                VALUES (\(id), \(trimmed), \(try ProviderContext.hash(secret)), \(now), \(canonical), \(chosen == .jwt ? chosen.rawValue : nil))
                """)
        }
        return (id, secret, canonical, chosen)
    }

    /// How the tokens for `resource` are written: a JWT when its server asked for them.
    func format(of resource: String?) async throws -> AccessTokenFormat {
        guard let resource else { return .opaque }
        let row = try await context.database.read { transaction in
            try await transaction.first("SELECT access_token_format FROM resource_servers WHERE resource = \(resource)")
        }
        return try row?.decode("access_token_format", as: String?.self).flatMap(AccessTokenFormat.init(rawValue:)) ?? .opaque
    }

    /// The audience of a token asked for `requested` by `client` (RFC 8707 §2): nil when
    /// none is asked for (a token for the provider's own resources), else the registered
    /// resource in its canonical form, when the client may ask for it. Anything else is
    /// `invalid_target`: a malformed URI, a resource no server is registered for, or one
    /// outside the client's ``RegisteredClient/resources``.
    func audience(_ requested: String?, client: RegisteredClient, in transaction: any SQLTransaction) async throws -> String? {
        guard let requested else { return nil }
        let resource: ResourceIndicator
        do {
            resource = try ResourceIndicator(requested)
        } catch {
            throw ProviderError.badRequest(.invalidTarget, "\(error)")
        }
        guard try await transaction.first("SELECT id FROM resource_servers WHERE resource = \(resource.uri)") != nil else {
            throw ProviderError.badRequest(.invalidTarget, "no resource server is registered for this resource")
        }
        if let allowed = client.resources, !allowed.contains(resource.uri) {
            throw ProviderError.badRequest(.invalidTarget, "this client may not ask for tokens for this resource")
        }
        return resource.uri
    }

    /// ``audience(_:client:in:)`` in a read of its own.
    func audience(_ requested: String?, client: RegisteredClient) async throws -> String? {
        guard requested != nil else { return nil }
        return try await context.database.read { transaction in try await self.audience(requested, client: client, in: transaction) }
    }

    /// RFC 8707 §2 at the token endpoint: a grant made for one resource issues tokens for
    /// that resource only. A request may repeat the grant's resource or leave it out; any
    /// other is `invalid_target`, and so is one naming a resource for a grant made for
    /// none (the resource is asked for when the person is, at the authorization request).
    static func check(_ requested: String?, against granted: String?) throws {
        guard let requested else { return }
        guard let canonical = try? ResourceIndicator(requested).uri, canonical == granted else {
            throw ProviderError.badRequest(
                .invalidTarget, granted == nil
                    ? "this grant was made for no resource: ask for the resource in the authorization request"
                    : "this grant was made for another resource"
            )
        }
    }

    /// Deletes one; false when there was none.
    func delete(_ id: String) async throws -> Bool {
        try await context.database.transaction { transaction in
            try await transaction.first("DELETE FROM resource_servers WHERE id = \(id) RETURNING id") != nil
        }
    }

    /// The resource server `Authorization: Basic` names with its secret (RFC 6749 §2.3.1
    /// encoding: each part form-urlencoded, then base64), or nil. The hash comparison is
    /// constant-time; an unknown id costs the same hash.
    func authenticate(_ header: String?) async throws -> Authenticated? {
        guard let header, header.count <= 1024, header.lowercased().hasPrefix("basic "),
              let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":"),
              let id = FormEncoding.unescape(text[..<colon].utf8),
              let secret = FormEncoding.unescape(text[text.index(after: colon)...].utf8)
        else { return nil }
        let presented = try ProviderContext.hash(secret)
        let row = try await context.database.read { transaction in
            try await transaction.first("SELECT secret_hash, resource FROM resource_servers WHERE id = \(id)")
        }
        let stored = try row?.decode("secret_hash", as: Data.self)
        guard ConstantTime.isEqual(stored ?? Data(count: presented.count), presented), stored != nil, let row else { return nil }
        return Authenticated(id: id, resource: try row.decode("resource", as: String?.self))
    }
}
