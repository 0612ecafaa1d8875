extension AdminAPI {
    /// `POST /admin/identities/<id>/consents/revoke`: withdraws the identity's consent to a
    /// third-party client (every resource), and ends that client's grants for it.
    public struct ConsentRevocation: Codable, Hashable, Sendable {
        /// The client's id (its metadata document's URL).
        public var client: String

        public init(client: String) {
            self.client = client
        }
    }
}
