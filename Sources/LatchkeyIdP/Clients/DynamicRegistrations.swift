import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

/// Dynamic client registration (RFC 7591) and a registration's own management (RFC 7592:
/// read and delete with its registration access token), as ``ClientRegistrationPolicy``
/// allows. A registered client is third-party: it gets the consent page
/// (``Consents``), and its metadata is checked as a metadata document's is
/// (``ClientMetadata``).
///
/// Against a flood: registrations per address and minute (per instance), a cap on live
/// dynamic clients across instances, and the request body capped like every body.
struct DynamicRegistrations: Sendable {
    let context: ProviderContext
    let limiter: RateLimiter

    private var policy: ClientRegistrationPolicy { context.configuration.clientRegistration }

    /// RFC 7591 §3.1–3.2: registers the client `body` describes; answers its registration
    /// (§3.2.1, with the values as registered) and the registration access token (shown
    /// once; only its hash is kept).
    /// `token` is the request's bearer token (``HTTPSupport/bearerToken(_:)``), if any.
    func register(_ body: Data, token presented: String?, requesterKey: String, now: Date = ProviderClock.now) async throws -> Data {
        switch policy.mode {
        case .off:
            throw ProviderError.notFound("this provider does not take dynamic client registrations")
        case .initialAccessToken(let expected):
            guard let presented, ConstantTime.isEqual(try ProviderContext.hash(presented), expected) else {
                throw ProviderError.unauthorized
            }
        case .open:
            break
        }
        guard limiter.allow("register|" + requesterKey, now: now) else {
            throw ProviderError.slowDown("too many registrations from this address; try again in a minute")
        }
        let metadata: ClientMetadata
        do {
            metadata = try ClientMetadata(registration: body)
        } catch let refusal as ClientMetadata.Refusal {
            throw ProviderError.badRequest(refusal.member == .redirectURIs ? .invalidRedirectURI : .invalidClientMetadata, refusal.description)
        }
        let jwks = try metadata.keyedBy.map { keyedBy -> String in
            guard case .jwks(let inline) = keyedBy, let keys = ClientMetadata.publicKeySet(inline) else {
                throw ProviderError.badRequest(.invalidClientMetadata, "jwks must hold 1 to \(ClientRegistry.maximumKeys) P-256 or Ed25519 public keys")
            }
            return String(decoding: keys, as: UTF8.self)
        }
        let id = "dyn-" + (try ProviderContext.randomToken())
        let token = try ProviderContext.randomToken()
        let name = metadata.clientName ?? "Unnamed application"
        let grants = metadata.grantTypes.map(\.rawValue).joined(separator: " ")
        let registration = try ProviderContext.randomToken()
        try await context.database.transaction { transaction in
            let live = try await transaction.first("SELECT COUNT(*) AS live FROM clients WHERE third_party = 1")?.decode("live", as: Int64.self) ?? 0
            guard live < Int64(policy.maximumClients) else {
                throw ProviderError.temporarilyUnavailable("the provider holds as many registered applications as it takes; try again later")
            }
            try await transaction.execute("""
                INSERT INTO clients (id, name, jwks, grant_types, redirect_uris, scopes, created_at, registration, third_party, registration_token_hash, application_type)
                VALUES (\(id), \(name), \(jwks), \(grants), \(metadata.redirectURIs.joined(separator: " ")), '', \(now), \(registration), 1,
                    \(try ProviderContext.hash(token)), \(metadata.applicationType))
                """)
            try await context.audit.record(AuditEntry(
                .clientCreated, actor: AuditEvent.Actor(kind: .anonymous), client: id, details: AuditEvent.Details(grantType: grants), now: now
            ), in: transaction)
        }
        return try answer(id: id, metadata: metadata, name: name, jwks: jwks, issuedAt: now, token: token)
    }

    /// RFC 7592 §2.1: the registration as it stands, for its own registration access token.
    func read(_ id: String, token: String?) async throws -> Data {
        let row = try await authorized(id, token)
        let client = try ClientRegistry.client(row)
        return try Self.encode(members(
            id: id, name: client.name, redirectURIs: client.redirectURIs, grantTypes: client.grantTypes,
            jwks: try row.decode("jwks", as: String?.self), applicationType: try row.decode("kind", as: String?.self),
            issuedAt: try row.decode("created_at", as: Date.self)
        ))
    }

    /// RFC 7592 §2.3: deletes the registration, ending every grant it holds.
    func delete(_ id: String, token: String?, now: Date = ProviderClock.now) async throws {
        _ = try await authorized(id, token)
        _ = try await ClientRegistry(context: context).delete(id, by: AuditEvent.Actor(kind: .client, id: id), now: now)
    }

    /// The registration's row when `token` is its registration access token;
    /// `401 invalid_token` otherwise, the same for an unknown client (RFC 7592 §2: no telling
    /// which), after the same hash.
    private func authorized(_ id: String, _ token: String?) async throws -> SQLRow {
        guard policy.mode != .off else { throw ProviderError.notFound("this provider does not take dynamic client registrations") }
        let presented = try ProviderContext.hash(token ?? "")
        let row = try await context.database.read { transaction in
            try await transaction.first("""
                SELECT id, name, jwks, grant_types AS grants, redirect_uris AS redirects, scopes, resources, registration, third_party, registration_token_hash,
                    application_type AS kind, created_at
                FROM clients WHERE id = \(id) AND third_party = 1
                """)
        }
        let stored = try row?.decode("registration_token_hash", as: Data?.self)
        guard let row, ConstantTime.isEqual(stored ?? Data(count: presented.count), presented), stored != nil else { throw ProviderError.unauthorized }
        return row
    }

    private func answer(id: String, metadata: ClientMetadata, name: String, jwks: String?, issuedAt: Date, token: String) throws -> Data {
        var members = members(
            id: id, name: name, redirectURIs: metadata.redirectURIs, grantTypes: metadata.grantTypes, jwks: jwks,
            applicationType: metadata.applicationType, issuedAt: issuedAt
        )
        members[ClientMetadataMember.registrationAccessToken.rawValue] = .string(token)
        return try Self.encode(members)
    }

    /// RFC 7591 §3.2.1's members for a registration.
    private func members(
        id: String, name: String, redirectURIs: [String], grantTypes: [GrantType], jwks: String?, applicationType: String?, issuedAt: Date
    ) -> [String: JSONValue] {
        typealias Member = ClientMetadataMember
        var members: [String: JSONValue] = [
            Member.clientID.rawValue: .string(id), Member.clientIDIssuedAt.rawValue: .number(Double(Int(issuedAt.timeIntervalSince1970))),
            Member.clientName.rawValue: .string(name), Member.redirectURIs.rawValue: .array(redirectURIs.map(JSONValue.string)),
            Member.grantTypes.rawValue: .array(grantTypes.map { .string($0.rawValue) }),
            Member.responseTypes.rawValue: [.string(AuthorizationRequestParameters.codeResponseType)],
            Member.tokenEndpointAuthMethod.rawValue: .string((jwks == nil ? Member.AuthMethod.none : .privateKeyJWT).rawValue),
            Member.registrationClientURI.rawValue: .string(context.url("\(ProtocolPath.registration)/\(id)").absoluteString),
        ]
        members[Member.applicationType.rawValue] = applicationType.map(JSONValue.string)
        members[Member.jwks.rawValue] = jwks.flatMap { try? JSONValue(json: Data($0.utf8)) }
        return members
    }

    private static func encode(_ members: [String: JSONValue]) throws -> Data {
        try JSONValue.object(members).json()
    }
}
