/// What a client asks `latchkey agent` to do (docs/PROTOCOL.md section 11): an open set,
/// so an older agent answers a newer client's operation with `unknownOperation` instead
/// of failing to parse it.
public struct AgentOperation: OpenName {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Who the agent is: its protocol version, the vault it holds, whether it is locked.
    public static let hello: AgentOperation = "hello"
    /// A page of the vault's entries (public keys and metadata) and its damaged records.
    public static let scan: AgentOperation = "scan"
    /// One entry.
    public static let entry: AgentOperation = "entry"
    /// A signature by one key over the bytes given.
    public static let sign: AgentOperation = "sign"
    /// A new key, made in the vault (or the TPM) by the agent.
    public static let createKey: AgentOperation = "create-key"
    /// A compare-and-swap of one record's metadata (a counter bump, kept tokens).
    public static let replaceMetadata: AgentOperation = "replace-metadata"
    /// `replace-metadata`, then `sign` if the swap took place: one round trip for a
    /// WebAuthn assertion, whose signed bytes carry the counter the swap stores.
    public static let replaceMetadataAndSign: AgentOperation = "replace-metadata-and-sign"
    /// Deletes one key.
    public static let deleteKey: AgentOperation = "delete-key"
    /// Whether one key can sign on this host (a TPM key is loaded and flushed).
    public static let checkUsable: AgentOperation = "check-usable"
    /// Forget the vault key until `unlock`.
    public static let lock: AgentOperation = "lock"
    /// Open the vault again (a passphrase vault needs the passphrase).
    public static let unlock: AgentOperation = "unlock"
    /// End the agent.
    public static let stop: AgentOperation = "stop"
}
