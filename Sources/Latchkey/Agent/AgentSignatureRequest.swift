#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A signature the agent is about to make, as its `--confirm` prompt shows it
/// (``KeyAgent/Configuration/confirmation``). Every string comes from the vault or the
/// kernel, and the relying party and user names in it were chosen by a provider: show
/// them escaped.
public struct AgentSignatureRequest: Sendable {
    /// The vault record's handle.
    public var handle: String
    /// What the key is: `webauthn` (a credential), `dpop`, `client-key`, or the record's
    /// own kind.
    public var kind: String
    /// For a credential, its relying party and user.
    public var relyingParty: String?
    public var userName: String?
    /// The asking process, as the kernel identifies it, and its command name
    /// (`/proc/<pid>/comm`, which that process can set itself).
    public var pid: Int32
    public var command: String?
}
