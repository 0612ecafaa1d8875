import Foundation
import LatchkeyProtocol
import LatchkeyCrypto
import LatchkeyWebAuthn
import Logging
import Synchronization
import LatchkeyOAuth

/// What every part of the reference provider shares (docs/ARCHITECTURE.md, "The
/// provider"): settings, the store, the issuer, the sealed secrets. Nothing here keeps
/// state a second instance would need: every identity, credential, job, session, code,
/// token, transfer and flow is in ``database``; an instance holds only caches (parsed
/// signing keys) and its per-address rate limits.
final class ProviderContext: Sendable {
    let configuration: ProviderConfiguration
    let database: any ProviderDatabase
    let logger: Logger
    /// The issuer and what is made of it, kept together: the relying party is read by
    /// every assertion and options answer, the token and challenge endpoints' URLs by
    /// every request to them, and parsing the issuer's origin or appending a path to it
    /// each time showed in profiles (docs/PERFORMANCE.md, "Less per request").
    private let issuerURL: Mutex<IssuerURLs>

    private struct IssuerURLs {
        var url: URL
        var relyingParty: RelyingParty
        /// ``ProviderContext/endpointPaths`` under `url`: a fixed set, never one a request names.
        var endpoints: [String: URL]
        /// What ``ProviderContext/urlText(_:)`` writes paths after (``ProviderContext/textPrefix(of:)``).
        var textPrefix: String?

        init(_ url: URL) {
            self.url = url
            relyingParty = RelyingParty(id: url.host ?? "", origins: [WebOrigin(url)?.description ?? ""])
            endpoints = Dictionary(uniqueKeysWithValues: ProviderContext.endpointPaths.map { ($0, url.appendingPathComponent($0)) })
            textPrefix = ProviderContext.textPrefix(of: url)
        }
    }

    /// The endpoints whose URLs requests read (a client assertion's audience, a DPoP
    /// proof's `htu`, the discovery document), made once per issuer.
    static let endpointPaths = [
        ProtocolPath.token, ProtocolPath.authorizationChallenge, ProtocolPath.revocation, ProtocolPath.introspection,
        ProtocolPath.userInfo, ProtocolPath.authorization, ProtocolPath.jwks, ProtocolPath.deviceAuthorization,
        ProtocolPath.deviceVerification, ProtocolPath.deviceApproval, ProtocolPath.sshCertificates, ProtocolPath.hostDirectory,
    ]
    /// Seals the store's secrets (signing keys, the decoy key) at rest.
    let sealing: StoreSealing
    let signingKeys: SigningKeys
    /// Whether the store was migrated and the secrets loaded (done once, lazily again if
    /// the database was unreachable at start).
    private let readiness = Mutex<Readiness>(Readiness())
    /// The preparation under way or done (``prepare()``); nil before the first and after a failed one.
    private let preparation = Mutex<Task<Void, any Error>?>(nil)

    private struct Readiness {
        var ready = false
        var decoyKey: HMAC.PreparedKey?
        var tickets: TicketSealer?
        var dpopNonces: DPoPNonces?
        var auditSigningKey: SigningKey?
    }

    /// The SSH CA's keys (``SSHAuthorityKeyRing``).
    let sshKeys: SSHAuthorityKeyRing

    /// The attestation CA, once loaded (``attestationAuthority()``).
    let loadedAttestationAuthority = Mutex<AttestationAuthority?>(nil)

    /// Clients known by a URL, and the documents fetched for them.
    let clientMetadata: ClientMetadataDocuments

    /// What the operator sees at `/metrics`.
    let metrics: ProviderMetrics
    /// The audit log's writer (docs/ARCHITECTURE.md, "The audit log").
    let audit: AuditLog
    /// Whether mail gets through now (with a mail transport configured).
    let mailHealth = MailHealth()

    init(configuration: ProviderConfiguration, database: any ProviderDatabase, storeKey: SymmetricKey, logger: Logger) {
        self.configuration = configuration
        let metrics = ProviderMetrics()
        self.metrics = metrics
        self.database = MeteredDatabase(database: database, metrics: metrics)
        self.logger = logger
        let issuer = configuration.issuer ?? URL(fileURLWithPath: "/")
        issuerURL = Mutex(IssuerURLs(issuer))
        sealing = StoreSealing(key: storeKey)
        audit = AuditLog(enabled: configuration.auditLog)
        signingKeys = SigningKeys(database: self.database, sealing: sealing, configuration: configuration)
        sshKeys = SSHAuthorityKeyRing(database: self.database, sealing: sealing)
        clientMetadata = ClientMetadataDocuments(policy: configuration.clientMetadataDocuments)
    }

    var issuer: URL { issuerURL.withLock { $0.url } }

    func setIssuer(_ url: URL) {
        let urls = IssuerURLs(url)
        issuerURL.withLock { $0 = urls }
    }

    /// The RP ID is the issuer's host; the origin is the issuer's origin, serialised as
    /// clients write it in `clientDataJSON` (RFC 6454 §6.1: the port only when it is not
    /// the scheme's default).
    var relyingParty: RelyingParty { issuerURL.withLock { $0.relyingParty } }

    /// `path` under the issuer; one of ``endpointPaths`` from the URLs made with the issuer.
    func url(_ path: String) -> URL {
        let (issuer, endpoint) = issuerURL.withLock { ($0.url, $0.endpoints[path]) }
        return endpoint ?? issuer.appendingPathComponent(path)
    }

    /// `path` under the issuer, as text: a sign-in's own URLs (its authenticate endpoint)
    /// are made on every request of it, and parsing a URL for each was 1% of a sign-in's
    /// profile. Same text as `url(path).absoluteString`.
    func urlText(_ path: String) -> String {
        let prefix = issuerURL.withLock { $0.textPrefix }
        return prefix.flatMap { Self.appending(path, toPrefix: $0) } ?? url(path).absoluteString
    }

    /// `issuer` + `/` + `path` without parsing, as `URL.appendingPathComponent` would write
    /// it, when that is sure (``textPrefix(of:)``, ``appending(_:toPrefix:)``); nil otherwise.
    static func appending(_ path: String, to issuer: URL) -> String? {
        textPrefix(of: issuer).flatMap { appending(path, toPrefix: $0) }
    }

    /// The issuer's text without a trailing `/`, made once per issuer; nil for an issuer with
    /// a query or fragment (RFC 8414 §2 allows none), under which no path is written as text.
    static func textPrefix(of issuer: URL) -> String? {
        guard issuer.query == nil, issuer.fragment == nil else { return nil }
        var text = issuer.absoluteString
        if text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// `prefix` + `/` + `path` when the path holds only letters, digits, `-`, `_` and `/`
    /// (unreserved, RFC 3986 §2.3, so nothing needs escaping, and no dot segment), with no
    /// `/` at its ends; nil otherwise.
    private static func appending(_ path: String, toPrefix prefix: String) -> String? {
        guard let first = path.utf8.first, let last = path.utf8.last, first != UInt8(ascii: "/"), last != UInt8(ascii: "/"),
              path.utf8.allSatisfy(isPlainPathByte)
        else { return nil }
        return prefix + "/" + path
    }

    private static func isPlainPathByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }

    /// `path?token=token`.
    func url(_ path: String, token: String) -> String {
        var components = URLComponents(url: url(path), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: ProtocolPath.tokenParameter, value: token)]
        return components?.string ?? ""
    }

    /// Migrates the store and loads its secrets, once. A database that cannot be reached
    /// is a 503 for this request and is tried again on the next.
    ///
    /// One preparation runs at a time, whoever asks (requests, housekeeping, sealing,
    /// mail): callers arriving meanwhile wait for it rather than each migrating and
    /// loading in turn behind the migration lock. A failed one is forgotten, so the next
    /// caller tries again.
    func prepare() async throws {
        if readiness.withLock({ $0.ready }) { return }
        try await preparationTask().value
    }

    /// ``prepare()`` for a request: waits at most `wait` for a preparation under way,
    /// then answers 503 while it goes on. A store coming back after an outage may take
    /// long to migrate and load on a loaded server; a client is told to come back rather
    /// than held past its own timeout, and the requests piling up meanwhile do not each
    /// start one.
    func prepareForRequest(wait: Duration = ProviderContext.requestPreparationWait) async throws {
        if readiness.withLock({ $0.ready }) { return }
        let task = preparationTask()
        try await withThrowingTaskGroup(of: Bool.self) { group in
            // Cancelling the waiter below does not cancel the preparation: it is not a child.
            group.addTask { try await task.value; return true }
            group.addTask { try await Task.sleep(for: wait); return false }
            defer { group.cancelAll() }
            guard try await group.next() == true else {
                throw ProviderError.temporarilyUnavailable("the provider's store is being prepared; try again shortly")
            }
        }
    }

    /// How long a request waits for the store's preparation before it is answered 503.
    static let requestPreparationWait = Duration.seconds(10)

    /// The preparation under way, started if there is none.
    private func preparationTask() -> Task<Void, any Error> {
        preparation.withLock { current in
            if let current { return current }
            let clock = configuration.clock
            let task = Task {
                do {
                    // By the provider's clock wherever it is called from (the first
                    // signing key's validity starts now).
                    try await clock.bound { try await self.load() }
                } catch {
                    // The only preparation under way is this one: the next caller starts anew.
                    self.preparation.withLock { $0 = nil }
                    throw error
                }
            }
            current = task
            return task
        }
    }

    private func load() async throws {
        try await Migrations.run(on: database)
        try await SkeletonRefresh.run(on: database)
        let decoy = try HMAC.PreparedKey(try await sealing.secret(named: "login-hint-decoy", in: database))
        let tickets = TicketSealer(secret: try await sealing.secret(named: "ticket-secret", in: database))
        let nonces = DPoPNonces(key: try await sealing.secret(named: "dpop-nonce", in: database))
        audit.load(key: try await sealing.secret(named: AuditChain.macKeyName, in: database))
        let auditKey = try await sealing.signingKey(named: AuditChain.signingKeyName, in: database)
        if configuration.sshAuthority { try await sshKeys.ensureCurrent(now: ProviderClock.now) }
        try await signingKeys.reload()
        readiness.withLock {
            $0.auditSigningKey = auditKey
            $0.decoyKey = decoy
            $0.tickets = tickets
            $0.dpopNonces = nonces
            $0.ready = true
        }
    }

    /// Signs the audit log's checkpoints (``AuditChain``); the same on every instance.
    func auditSigningKey() async throws -> SigningKey {
        try await loadedKey(\.auditSigningKey, "the provider's store is not ready")
    }

    /// A key ``prepare()`` loaded from the store; `unavailable` until it has.
    private func loadedKey(_ key: KeyPath<Readiness, SigningKey?>, _ notReady: String) async throws -> SigningKey {
        try await prepare()
        guard let loaded = readiness.withLock({ $0[keyPath: key] }) else { throw ProviderError.temporarilyUnavailable(notReady) }
        return loaded
    }

    /// Keys the stable decoy credential IDs answered for unknown login hints; the same on
    /// every instance, so a decoy does not change with the instance that answers. Prepared
    /// once, since every hinted request computes sixteen decoys under it.
    var decoyKey: HMAC.PreparedKey {
        get throws {
            guard let key = readiness.withLock({ $0.decoyKey }) else {
                throw ProviderError.temporarilyUnavailable("the provider's store is not ready")
            }
            return key
        }
    }

    /// Seals the state of flows that are not stored until the client proves something
    /// (docs/SECURITY.md, "Limits"); the same secret on every instance.
    var tickets: TicketSealer {
        get throws {
            guard let tickets = readiness.withLock({ $0.tickets }) else {
                throw ProviderError.temporarilyUnavailable("the provider's store is not ready")
            }
            return tickets
        }
    }

    /// The DPoP nonces handed out and required with `--require-dpop-nonce`; the same on
    /// every instance.
    var dpopNonces: DPoPNonces {
        get throws {
            guard let nonces = readiness.withLock({ $0.dpopNonces }) else {
                throw ProviderError.temporarilyUnavailable("the provider's store is not ready")
            }
            return nonces
        }
    }

    // MARK: Randomness and hashes

    static func randomToken() throws -> String {
        Base64URL.encode(try SecureRandom.bytes(count: 32))
    }

    /// Two tokens as ``randomToken()`` makes them, from one draw: each draw from
    /// OpenSSL's generator costs its locking and fork check again, and a sign-in made
    /// ten (docs/PERFORMANCE.md, "Less per request").
    static func randomTokenPair() throws -> (String, String) {
        let bytes = try SecureRandom.bytes(count: 64)
        return (Base64URL.encode(bytes.prefix(32)), Base64URL.encode(bytes.suffix(32)))
    }

    /// A sign-in session's id (as ``randomToken()`` makes one) and its 32-byte WebAuthn
    /// challenge, from one draw (``randomTokenPair()``).
    static func sessionIDAndChallenge() throws -> (id: String, challenge: Data) {
        let bytes = try SecureRandom.bytes(count: 64)
        return (Base64URL.encode(bytes.prefix(32)), Data(bytes.suffix(32)))
    }

    /// Tokens, codes and capability ids are stored as their SHA-256 only.
    static func hash(_ token: String) throws -> Data {
        try DigestAlgorithm.sha256.hash(Data(token.utf8))
    }

    /// A fresh six-digit code and its hash.
    static func newCode() throws -> (code: String, hash: Data) {
        let code = String(format: "%06u", try SecureRandom.uniform(below: 1_000_000))
        return (code, try hash(code))
    }

    /// `a…@example.com`: enough for a user to recognise the address, not to learn it.
    static func masked(_ address: String) -> String {
        guard let at = address.firstIndex(of: "@"), at > address.startIndex else { return "your address" }
        return String(address[address.startIndex]) + "…" + address[at...]
    }
}
