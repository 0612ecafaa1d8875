extension AdminAPI {
    /// `201` to `POST /admin/signing-keys/rotate`: the new key is published now and signs
    /// from `signsFrom`.
    public struct KeyRotation: Codable, Hashable, Sendable {
        public var kid: String
        public var signsFrom: Int

        public init(kid: String, signsFrom: Int) {
            self.kid = kid
            self.signsFrom = signsFrom
        }
    }
}
