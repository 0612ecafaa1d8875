/// The agent's answer to one request (docs/PROTOCOL.md section 11): `error` when it
/// failed, else the fields the operation returns.
public struct AgentReply: Codable, Sendable, Equatable {
    public var error: AgentFailure?
    /// `hello`, `lock`, `unlock`: the agent's state after the request.
    public var agent: AgentStatus?
    /// `scan`: one page of entries, oldest first.
    public var entries: [AgentEntry]?
    /// `scan` (first page only): the records that could not be read, by handle.
    public var problems: [AgentFailure]?
    /// `scan`: where the next page starts; absent on the last page.
    public var next: AgentCursor?
    /// `entry`, `create-key`, `replace-metadata`, `replace-metadata-and-sign`.
    public var entry: AgentEntry?
    /// `sign`, `replace-metadata-and-sign`: the signature, base64url.
    public var signature: String?

    public init(
        error: AgentFailure? = nil, agent: AgentStatus? = nil, entries: [AgentEntry]? = nil, problems: [AgentFailure]? = nil,
        next: AgentCursor? = nil, entry: AgentEntry? = nil, signature: String? = nil
    ) {
        self.error = error
        self.agent = agent
        self.entries = entries
        self.problems = problems
        self.next = next
        self.entry = entry
        self.signature = signature
    }
}

/// A failed request, or a damaged record in a scan: the vault's error code (`wrongKey`,
/// `keyNotFound`, …) or the agent's own (`locked`, `unknownOperation`, `badRequest`,
/// `refused`, `denied`), and a reason for people.
public struct AgentFailure: Codable, Sendable, Equatable {
    public var code: String
    public var reason: String
    public var handle: String?

    public init(code: String, reason: String, handle: String? = nil) {
        self.code = code
        self.reason = reason
        self.handle = handle
    }

    /// The agent holds no vault key now: `latchkey agent --unlock`.
    public static let locked = "locked"
    /// An operation this agent does not know.
    public static let unknownOperation = "unknownOperation"
    /// A request missing a field, or with one out of bounds.
    public static let badRequest = "badRequest"
    /// The user said no at the agent's `--confirm` prompt, or nobody answered in time.
    public static let denied = "denied"
}

/// What the agent says of itself.
public struct AgentStatus: Codable, Sendable, Equatable {
    /// The frame version it speaks (``AgentFrame/version``).
    public var version: Int
    /// The vault directory it serves, as an absolute path without symbolic links.
    public var store: String
    public var locked: Bool
    /// Whether each signature waits for a yes on the agent's terminal.
    public var confirms: Bool
    public var pid: Int32
    /// Whether `unlock` needs the vault's passphrase (else the agent reads its key source
    /// again: a TPM-sealed key, a key file, a systemd credential).
    public var passphraseToUnlock: Bool

    public init(version: Int, store: String, locked: Bool, confirms: Bool, pid: Int32, passphraseToUnlock: Bool) {
        self.version = version
        self.store = store
        self.locked = locked
        self.confirms = confirms
        self.pid = pid
        self.passphraseToUnlock = passphraseToUnlock
    }
}

/// One vault entry as the agent describes it: everything a `VaultEntry` holds, never a
/// private key.
public struct AgentEntry: Codable, Sendable, Equatable {
    public var handle: String
    /// `ES256` or `EdDSA`.
    public var algorithm: String
    /// The SubjectPublicKeyInfo DER, base64url.
    public var publicKey: String
    /// The caller's metadata, base64url.
    public var metadata: String
    /// Seconds since 1970.
    public var createdAt: Double
    public var updatedAt: Double
    /// `software` or `tpm`.
    public var protection: String

    public init(handle: String, algorithm: String, publicKey: String, metadata: String, createdAt: Double, updatedAt: Double, protection: String) {
        self.handle = handle
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.metadata = metadata
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.protection = protection
    }
}
