/// What ``Embedded/scanCredentials(checkingKeys:)`` found: the credentials that could be read, and the
/// records that could not.
public struct CredentialScan: Sendable {
    /// A vault record that failed to read or authenticate.
    public struct DamagedRecord: Sendable, Hashable {
        /// The record's handle (its file name in the vault's `keys/`).
        public var handle: String
        /// Why it could not be read.
        public var reason: String
    }

    public var credentials: [Credential]
    public var damaged: [DamagedRecord]
}
