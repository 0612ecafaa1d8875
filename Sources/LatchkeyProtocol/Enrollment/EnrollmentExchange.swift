/// Sign-up and recovery (docs/PROTOCOL.md section 6): a username starts the flow, steps
/// follow, and the last answer names a bind URL.
public enum EnrollmentExchange {
    /// `POST v1/signup` or `POST v1/recovery`.
    public struct Start: Codable, Hashable, Sendable {
        public var username: String

        public init(username: String) {
            self.username = username
        }
    }

    /// The answer once the steps are done: a bind URL (section 2) on the same provider.
    public struct Finished: Codable, Hashable, Sendable {
        public var bindURL: String

        public init(bindURL: String) {
            self.bindURL = bindURL
        }
    }
}
