import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn

/// The device authorization grant (RFC 8628) on the provider side: a device asks for a
/// code (§3.1–3.2), a person approves or denies it with a passkey from a device that
/// holds one (our approval exchange, docs/PROTOCOL.md section 7; the code alone never
/// decides), and the device's polls of the token endpoint (§3.4–3.5) get the answer.
///
/// User codes are guessable by design (~34.6 bits), so wrong entries are counted per
/// address and over the whole code space (§5.1), and the live codes a client or an address
/// may hold are capped, since each is a row until it expires, in a way a crowd cannot turn
/// against honest devices (``makeRoom(client:requesterKey:requesterNetwork:perClient:perAddress:now:in:)``,
/// docs/SECURITY.md, "Limits").
struct DeviceAuthorizations: Sendable {
    let context: ProviderContext
    let credentials: CredentialRegistry
    let grants: GrantLedger

    private var configuration: ProviderConfiguration { context.configuration }

    /// The statuses of a device code.
    enum Status: String {
        case pending, approved, denied, spent
    }

    // MARK: The device asks (RFC 8628 §3.1, §3.2)

    /// Issues a device code and a user code for `client` (already authenticated when it
    /// has keys). `requester` is the address the request came from, shown to the approver;
    /// `requesterKey` its limit key; its network (``IPNetwork/networkKey(for:)``) is what a
    /// full pool gives way by.
    func start(
        _ request: DeviceAuthorizationRequest, client: RegisteredClient, requester: String, requesterKey: String, now: Date = ProviderClock.now
    ) async throws -> DeviceAuthorizationResponse {
        let requesterNetwork = IPNetwork.networkKey(for: requester)
        guard client.allows(.deviceCode) else {
            throw ProviderError.badRequest(.unauthorizedClient, "this client may not use the device authorization grant")
        }
        guard (request.scope?.utf8.count ?? 0) <= 1024 else { throw ProviderError.badRequest(.invalidRequest, "scope is over 1024 bytes") }
        // A host's sign-in for PAM (docs/PROTOCOL.md section 13): only a client that
        // authenticated may describe what it asks, so an approver can trust the host name.
        let login = try request.authorizationDetails.map { parameter -> String in
            guard client.isConfidential else {
                throw ProviderError.badRequest(.invalidAuthorizationDetails, "authorization details need a client that authenticates (private_key_jwt)")
            }
            switch PAMLoginDetail.parse(parameter) {
            case .success(let detail): return try detail.parameter()
            case .failure(let error): throw ProviderError.badRequest(.invalidAuthorizationDetails, error.reason, underlying: error)
            }
        }
        let scope = SignIns.grantedScope(request.scope, context.configuration)
        let resource = try await ResourceServers(context: context).audience(request.resource, client: client)
        let deviceCode = try ProviderContext.randomToken()
        let deviceHash = try ProviderContext.hash(deviceCode)
        let expiresAt = now.addingTimeInterval(configuration.deviceCodeLifetime)
        let perClient = configuration.maximumLiveDeviceCodesPerClient
        let perAddress = configuration.maximumLiveDeviceCodesPerAddress
        let interval = configuration.deviceCodeInterval
        // One client's starts take turns: each reads the whole pool it may change, which
        // concurrent SERIALIZABLE transactions would otherwise abort each other over.
        let userCode = try await context.database.exclusiveTransaction(lock: try Self.poolLock(client.id)) { transaction -> String in
            try await self.makeRoom(
                client: client.id, requesterKey: requesterKey, requesterNetwork: requesterNetwork, perClient: perClient, perAddress: perAddress,
                now: now, in: transaction
            )
            // A code still in use is never handed out twice; an expired one may be reused.
            for _ in 0..<8 {
                let candidate = try Self.randomUserCode()
                try await transaction.execute("DELETE FROM device_codes WHERE user_code = \(candidate) AND expires_at <= \(now)")
                guard try await transaction.first("SELECT 1 FROM device_codes WHERE user_code = \(candidate)") == nil else { continue }
                try await transaction.execute("""
                    INSERT INTO device_codes (device_hash, user_code, client_id, scope, requester, requester_key, requester_network, created_at, expires_at,
                        interval_seconds, status, host_login, resource)
                    VALUES (\(deviceHash), \(candidate), \(client.id), \(scope), \(requester), \(requesterKey), \(requesterNetwork), \(now), \(expiresAt),
                        \(Int64(interval)), \(Status.pending.rawValue), \(login), \(resource))
                    """)
                return candidate
            }
            throw ProviderError.temporarilyUnavailable("no free user code; try again")
        }
        let verification = context.url(ProtocolPath.deviceVerification)
        var complete = URLComponents(url: verification, resolvingAgainstBaseURL: false)
        complete?.queryItems = [URLQueryItem(name: DeviceAuthorizationResponse.userCodeParameter, value: DeviceUserCode.display(userCode))]
        return DeviceAuthorizationResponse(
            deviceCode: deviceCode, userCode: DeviceUserCode.display(userCode), verificationURI: verification,
            verificationURIComplete: complete?.url, expiresIn: Int(configuration.deviceCodeLifetime), interval: interval
        )
    }

    /// The lock a client's pool of live codes is changed under: 64 bits of a SHA-256 of
    /// its id (PostgreSQL advisory locks take a `bigint`).
    static func poolLock(_ clientID: String) throws -> Int64 {
        let digest = try ProviderContext.hash("device-code-pool|" + clientID)
        return digest.prefix(8).reduce(Int64(0)) { ($0 << 8) | Int64($1) }
    }

    /// The statuses of a code that still holds a place: waiting, or approved and not yet
    /// collected by the device's poll.
    private static let live = "('\(Status.pending.rawValue)', '\(Status.approved.rawValue)')"

    /// Makes room for one more live code of `client` from `requesterKey`, or refuses with
    /// `slow_down` (docs/SECURITY.md, "Device sign-in"). An address (an IPv6 /64) holds at
    /// most `perAddress` live codes of a client. A client's codes share a pool of
    /// `perClient`; when it is full, the newcomer takes the place of the oldest code (a
    /// waiting one before an approved one) of the network (``IPNetwork/networkKey(for:)``)
    /// holding the most, but only if that network would still hold more than the
    /// newcomer's afterwards. So a crowd that fills the pool gives way to every honest
    /// device from a network holding fewer codes than it, and cannot win places back from
    /// each other or from them; to refuse a device from a network holding none, it needs
    /// as many distinct networks (IPv4 /24s, IPv6 /48s) as the pool has places. Pools are
    /// per client: a flood of a public client never touches a keyed one's.
    func makeRoom(
        client: String, requesterKey: String, requesterNetwork: String, perClient: Int, perAddress: Int, now: Date, in transaction: any SQLTransaction
    ) async throws {
        let counts = try await transaction.first("""
            SELECT (SELECT count(*) FROM device_codes WHERE client_id = \(client) AND expires_at > \(now) AND status IN \(raw: Self.live)) AS pool,
                (SELECT count(*) FROM device_codes
                 WHERE client_id = \(client) AND requester_key = \(requesterKey) AND expires_at > \(now) AND status IN \(raw: Self.live)) AS held,
                (SELECT count(*) FROM device_codes
                 WHERE client_id = \(client) AND COALESCE(requester_network, requester_key) = \(requesterNetwork) AND expires_at > \(now)
                    AND status IN \(raw: Self.live)) AS network_held
            """)
        guard try counts?.decode("held", as: Int64.self) ?? 0 < Int64(perAddress) else {
            throw ProviderError.slowDown("too many device codes waiting from this address; try again later")
        }
        guard try counts?.decode("pool", as: Int64.self) ?? 0 >= Int64(perClient) else { return }
        let networkHeld = try counts?.decode("network_held", as: Int64.self) ?? 0
        guard let busiest = try await transaction.first("""
                SELECT COALESCE(requester_network, requester_key) AS network, count(*) AS held FROM device_codes
                WHERE client_id = \(client) AND expires_at > \(now) AND status IN \(raw: Self.live)
                GROUP BY COALESCE(requester_network, requester_key) ORDER BY held DESC, min(created_at) ASC LIMIT 1
                """),
              try busiest.decode("held", as: Int64.self) > networkHeld + 1,
              let oldest = try await transaction.first("""
                SELECT device_hash, family_id FROM device_codes
                WHERE client_id = \(client) AND COALESCE(requester_network, requester_key) = \(try busiest.decode("network", as: String.self))
                    AND expires_at > \(now) AND status IN \(raw: Self.live)
                ORDER BY CASE status WHEN \(Status.pending.rawValue) THEN 0 ELSE 1 END, created_at LIMIT 1
                """)
        else {
            throw ProviderError.slowDown("this client has too many device codes waiting; try again later")
        }
        // Given up as expired: its device's next poll hears `expired_token` (RFC 8628 §3.5);
        // an approval's family, which no token came from yet, ends with it.
        try await transaction.execute("UPDATE device_codes SET expires_at = \(now) WHERE device_hash = \(try oldest.decode("device_hash", as: Data.self))")
        if let familyID = try oldest.decode("family_id", as: String?.self) {
            try await grants.revokeFamily(familyID, now: now, in: transaction)
        }
    }

    /// 8 characters drawn uniformly from the RFC 8628 §6.1 alphabet (bytes ≥ 240 are
    /// dropped, so no character is likelier than another).
    static func randomUserCode() throws -> String {
        var code = ""
        while code.count < DeviceUserCode.length {
            for byte in try SecureRandom.bytes(count: 16) where byte < 240 && code.count < DeviceUserCode.length {
                code.append(DeviceUserCode.alphabet[Int(byte) % DeviceUserCode.alphabet.count])
            }
        }
        return code
    }

    // MARK: The device polls (RFC 8628 §3.4, §3.5)

    /// The grant family of an approved device code, spent now, and whether it was a
    /// host's sign-in for PAM (section 13: its tokens get no refresh token, since the host
    /// needs the approval once and must not keep acting for the person); otherwise the refusal
    /// RFC 8628 §3.5 prescribes (`authorization_pending`, `slow_down` — which lengthens
    /// the code's interval by 5 s — `access_denied`, `expired_token`), committed with the
    /// poll's time.
    func redeem(_ deviceCode: String, clientID: String, now: Date, in transaction: any SQLTransaction) async throws -> Verdict<(familyID: String, hostLogin: Bool)> {
        guard deviceCode.utf8.count <= 256 else { return .refused(.badRequest(.invalidGrant, "unknown device code")) }
        let hash = try ProviderContext.hash(deviceCode)
        guard let row = try await transaction.first("""
            SELECT client_id, expires_at, interval_seconds, polled_at, status, family_id, host_login FROM device_codes WHERE device_hash = \(hash)
            """), try row.decode("client_id", as: String.self) == clientID
        else {
            return .refused(.badRequest(.invalidGrant, "unknown device code"))
        }
        let status = Status(rawValue: try row.decode("status", as: String.self))
        if status == .spent { return .refused(.badRequest(.invalidGrant, "this device code was already used")) }
        guard try row.decode("expires_at", as: Date.self) > now else { return .refused(.badRequest(.expiredToken, "the device code has expired; start again")) }
        switch status {
        case .denied?:
            return .refused(.badRequest(.accessDenied, "the sign-in was denied"))
        case .approved?:
            guard let familyID = try row.decode("family_id", as: String?.self) else { throw ProviderError.serverError("an approved device code has no grant") }
            try await transaction.execute("UPDATE device_codes SET status = \(Status.spent.rawValue), polled_at = \(now) WHERE device_hash = \(hash)")
            return .accepted((familyID, try row.decode("host_login", as: String?.self) != nil))
        default:
            let interval = try row.decode("interval_seconds", as: Int64.self)
            if let polled = try row.decode("polled_at", as: Date?.self), now.timeIntervalSince(polled) < Double(interval) {
                try await transaction.execute("""
                    UPDATE device_codes SET interval_seconds = \(interval + 5), polled_at = \(now) WHERE device_hash = \(hash)
                    """)
                return .refused(.badRequest(.slowDown, "polled faster than every \(interval) s; wait \(interval + 5) s between polls from now on"))
            }
            try await transaction.execute("UPDATE device_codes SET polled_at = \(now) WHERE device_hash = \(hash)")
            return .refused(.badRequest(.authorizationPending, "waiting for the person to approve"))
        }
    }

    // MARK: A person decides (docs/PROTOCOL.md section 7)

    /// What the device asked for, with request options bound to its code. A wrong or
    /// expired code counts against the address and against the whole code space; past
    /// either limit, even a right code is refused until the window passes.
    func lookup(userCode typed: String, requesterKey: String, now: Date = ProviderClock.now) async throws -> DeviceApprovalExchange.Request {
        let addressKey = "user-code|" + requesterKey
        let globalKey = "user-code|*"
        let perAddress = configuration.maximumUserCodeFailuresPerAddress
        let overall = configuration.maximumUserCodeFailures
        let found = try await context.database.transaction { transaction -> Verdict<(Data, String, String, Date, String, Date, String?)> in
            guard try await AttemptCounters.count(addressKey, now: now, in: transaction) < perAddress else {
                return .refused(.slowDown("too many wrong codes from this address; try again later"))
            }
            guard try await AttemptCounters.count(globalKey, now: now, in: transaction) < overall else {
                return .refused(.slowDown("too many wrong codes are being tried; try again later"))
            }
            guard let code = DeviceUserCode.normalise(typed),
                  let row = try await transaction.first("""
                    SELECT device_hash, client_id, scope, created_at, requester, expires_at, host_login FROM device_codes
                    WHERE user_code = \(code) AND status = \(Status.pending.rawValue) AND expires_at > \(now)
                    """)
            else {
                try await AttemptCounters.increment(addressKey, now: now, in: transaction)
                try await AttemptCounters.increment(globalKey, now: now, in: transaction)
                return .refused(.badRequest(.invalidCode, "unknown, expired or already decided code"))
            }
            return .accepted((
                try row.decode("device_hash"), try row.decode("client_id"), try row.decode("scope"), try row.decode("created_at"),
                try row.decode("requester"), try row.decode("expires_at"), try row.decode("host_login")
            ))
        }.get()
        let (deviceHash, clientID, scope, requestedAt, requester, expiresAt, details) = found
        let client = try await ClientRegistry(context: context).client(clientID)
        let session = DeviceApprovalSession(
            id: try ProviderContext.randomToken(), deviceHash: deviceHash, challenge: try SecureRandom.bytes(count: 32),
            expiresAt: min(expiresAt, now.addingTimeInterval(configuration.authenticationSessionLifetime))
        )
        let ticket = try context.tickets.seal(session, purpose: DeviceApprovalSession.purpose)
        let dates = ISO8601DateFormatter()
        return DeviceApprovalExchange.Request(
            userCode: DeviceUserCode.display(DeviceUserCode.normalise(typed) ?? typed), clientID: clientID, clientName: client?.name ?? clientID,
            scope: scope.split(separator: " ").map(String.init), requestedAt: dates.string(from: requestedAt), requestedFrom: requester,
            expiresAt: dates.string(from: expiresAt),
            publicKey: PublicKeyCredentialRequestOptionsJSON(challenge: session.challenge, rpId: context.relyingParty.id, allowCredentials: nil, userVerification: "preferred"),
            submit: context.url("\(ProtocolPath.deviceApproval)/\(ticket)").absoluteString,
            login: try details.flatMap { try PAMLoginDetail.parse($0).get() }
        )
    }

    /// Verifies the assertion over the session's challenge and records the decision: an
    /// approval starts a grant family for the signer's identity that the device's next
    /// poll draws on; a denial ends the code. Either only while the code is pending.
    func decide(session ticket: String, _ decision: DeviceApprovalExchange.Decision, now: Date = ProviderClock.now) async throws {
        guard ticket.utf8.count <= 4096, let session = try context.tickets.open(DeviceApprovalSession.self, from: ticket, purpose: DeviceApprovalSession.purpose),
              session.expiresAt > now
        else {
            throw ProviderError.notFound("unknown, used or expired approval session")
        }
        guard [DeviceApprovalExchange.Choice.approve, .deny].contains(decision.decision) else {
            throw ProviderError.badRequest(.invalidRequest, "decision is approve or deny")
        }
        let response = decision.credential
        let credential = try await context.database.read { transaction in
            try await self.credentials.signer(
                response.rawId.data, session: session.id, spentError: .notFound("unknown, used or expired approval session"), in: transaction
            )
        }
        let signCount = try context.verify(response, by: credential, challenge: session.challenge, allowed: [])
        try await context.database.transaction { transaction -> Verdict<Void> in
            guard try await SpentTickets.spend(session.id, until: session.expiresAt, in: transaction) else {
                return .refused(.notFound("unknown, used or expired approval session"))
            }
            try await self.credentials.recordUse(credential, signCount: signCount, now: now, in: transaction)
            guard let row = try await transaction.first("""
                SELECT client_id, scope, host_login, resource FROM device_codes
                WHERE device_hash = \(session.deviceHash) AND status = \(Status.pending.rawValue) AND expires_at > \(now)
                """)
            else {
                return .refused(.badRequest(.invalidCode, "this code has expired or was already decided"))
            }
            let clientID = try row.decode("client_id", as: String.self)
            let scope = try row.decode("scope", as: String.self)
            let approve = decision.decision == .approve
            let entry: AuditEntry
            if let parameter = try row.decode("host_login", as: String?.self) {
                // A sign-in to a host: what was approved, as the approver saw it.
                let login = try PAMLoginDetail.parse(parameter).get()
                entry = AuditEntry(
                    approve ? .pamApproved : .pamDenied, actor: .identity(credential.identityID), subject: credential.identityID, client: clientID,
                    details: AuditEvent.Details(
                        credential: Base64URL.encode(credential.record.id), username: login.user, service: login.service, remoteHost: login.remoteHost
                    ), now: now
                )
            } else {
                entry = AuditEntry(
                    approve ? .deviceApproved : .deviceDenied, actor: .identity(credential.identityID), subject: credential.identityID,
                    client: clientID, details: AuditEvent.Details(credential: Base64URL.encode(credential.record.id), scope: scope), now: now
                )
            }
            try await self.context.audit.record(entry, in: transaction)
            if decision.decision == .approve {
                let familyID = try await self.grants.startFamily(
                    identityID: credential.identityID, credentialID: credential.record.id, clientID: clientID, scope: scope,
                    resource: try row.decode("resource", as: String?.self), now: now, in: transaction
                )
                try await transaction.execute("""
                    UPDATE device_codes SET status = \(Status.approved.rawValue), family_id = \(familyID) WHERE device_hash = \(session.deviceHash)
                    """)
            } else {
                try await transaction.execute("UPDATE device_codes SET status = \(Status.denied.rawValue) WHERE device_hash = \(session.deviceHash)")
            }
            return .accepted(())
        }.get()
    }

    /// Drops device codes a while after they expire.
    static func prune(now: Date, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("DELETE FROM device_codes WHERE expires_at <= \(now.addingTimeInterval(-600))")
    }
}
