/// One request to `latchkey agent` (docs/PROTOCOL.md section 11). One flat object: each
/// operation reads the fields it needs and the agent refuses a request missing one.
/// Bytes travel as base64url without padding, checked strictly by the agent.
public struct AgentRequest: Codable, Sendable, Equatable {
    public var op: AgentOperation
    /// The key concerned: 32 lower-case hexadecimal characters.
    public var handle: String?
    /// `sign` and `replace-metadata-and-sign`: the bytes to sign.
    public var message: String?
    /// `create-key`: `ES256` or `EdDSA`.
    public var algorithm: String?
    /// `create-key`: `software` or `tpm`.
    public var protection: String?
    /// `create-key`, `replace-metadata` and `replace-metadata-and-sign`: the record's new
    /// metadata.
    public var metadata: String?
    /// `replace-metadata` and `replace-metadata-and-sign`: the metadata the client read,
    /// which must still be there.
    public var expected: String?
    /// `scan`: the cursor of the page before (its `next`), absent for the first.
    public var after: AgentCursor?
    /// `unlock` of a passphrase vault.
    public var passphrase: String?

    public init(
        op: AgentOperation, handle: String? = nil, message: String? = nil, algorithm: String? = nil, protection: String? = nil,
        metadata: String? = nil, expected: String? = nil, after: AgentCursor? = nil, passphrase: String? = nil
    ) {
        self.op = op
        self.handle = handle
        self.message = message
        self.algorithm = algorithm
        self.protection = protection
        self.metadata = metadata
        self.expected = expected
        self.after = after
        self.passphrase = passphrase
    }
}

/// Where a `scan` page ended: the last entry's creation time and handle, the order the
/// vault lists in. A record created or deleted between pages shifts nothing.
public struct AgentCursor: Codable, Sendable, Equatable {
    public var createdAt: Double
    public var handle: String

    public init(createdAt: Double, handle: String) {
        self.createdAt = createdAt
        self.handle = handle
    }
}
