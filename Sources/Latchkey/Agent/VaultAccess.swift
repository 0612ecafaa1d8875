/// How an ``Embedded`` instance reaches its vault: through a key agent, or opened in this
/// process (``Embedded/Configuration/agentSocket``). `latchkey -v` prints it.
public struct VaultAccess: Sendable, Hashable, CustomStringConvertible {
    /// The agent's socket, when the vault is used through one.
    public var agentSocket: String?
    /// Which, and why: the agent's socket and pid, or why no agent was used.
    public var explanation: String

    public var description: String { explanation }
}
