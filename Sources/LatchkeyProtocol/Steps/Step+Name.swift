extension Step {
    /// A step's name, an open set (a new provider policy is a new name). The names this
    /// protocol defines are the static members.
    public struct Name: OpenName {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A one-time code was sent (by e-mail); answer it in the ``Field/Name/code`` field.
        public static let verifyCode = Name(rawValue: "verify-code")
        /// Profile fields for a sign-up (section 6).
        public static let enrollProfile = Name(rawValue: "enroll-profile")
        /// The reference provider's terms-of-service policy: ``Field/Name/accept``.
        public static let acceptTerms = Name(rawValue: "accept-terms")
        /// Several credentials fit; answered on the client, never sent by a provider.
        public static let chooseCredential = Name(rawValue: "choose-credential")
        /// Device linking's approval on the exporting client; never sent by a provider.
        public static let confirmImport = Name(rawValue: "confirm-import")
    }
}
