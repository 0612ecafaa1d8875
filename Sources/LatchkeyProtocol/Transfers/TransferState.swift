/// Where a transfer stands (docs/PROTOCOL.md section 5), as the `state` of a poll or of
/// a final answer. An open set, so an unknown state decodes and the client decides.
public struct TransferState: OpenName {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A code is out; nobody has redeemed it yet.
    public static let waiting = TransferState(rawValue: "waiting")
    /// The code was redeemed; the importer is making its key.
    public static let redeemed = TransferState(rawValue: "redeemed")
    /// The importer submitted its key; the exporter decides.
    public static let importRequested = TransferState(rawValue: "import-requested")
    public static let completed = TransferState(rawValue: "completed")
    public static let declined = TransferState(rawValue: "declined")
    public static let cancelled = TransferState(rawValue: "cancelled")
    public static let expired = TransferState(rawValue: "expired")
    /// Too many wrong codes closed it.
    public static let failed = TransferState(rawValue: "failed")

    /// The states a transfer ends in.
    public static let final: Set<TransferState> = [.completed, .declined, .cancelled, .expired, .failed]
}

/// A transfer's state after a call that may end it, or at the importer's poll, with the
/// bound credential once it is `completed`.
public struct TransferOutcome: Codable, Hashable, Sendable {
    public var state: TransferState
    public var credential: CredentialReference?

    public init(state: TransferState, credential: CredentialReference? = nil) {
        self.state = state
        self.credential = credential
    }
}
