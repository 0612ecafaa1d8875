extension Step {
    /// One input a step asks for.
    public struct Field: Codable, Hashable, Sendable {
        public var name: Name
        public var required: Bool
        /// A hint for the input (`one-time-code`, `email`, `boolean`, …), an open set.
        public var kind: String?

        public init(name: Name, required: Bool, kind: String? = nil) {
            self.name = name
            self.required = required
            self.kind = kind
        }

        enum CodingKeys: String, CodingKey {
            case name, required, kind
        }

        /// `required` may be absent, meaning optional.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(Name.self, forKey: .name)
            required = try container.decodeIfPresent(Bool.self, forKey: .required) ?? false
            kind = try container.decodeIfPresent(String.self, forKey: .kind)
        }

        /// The `verify-code` step's one field.
        public static let code = Field(name: .code, required: true, kind: "one-time-code")
        /// The `accept-terms` step's one field (`"true"` accepts).
        public static let accept = Field(name: .accept, required: true, kind: "boolean")
        /// The `enroll-profile` step's fields, in the order a form shows them.
        public static let profile: [Field] = [
            Field(name: .givenName, required: true, kind: "given-name"),
            Field(name: .familyName, required: false, kind: "family-name"),
            Field(name: .email, required: true, kind: "email"),
        ]
    }
}

extension Step.Field {
    /// A field's name, an open set; the names this protocol defines are the static members.
    public struct Name: OpenName {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let code = Name(rawValue: "code")
        public static let accept = Name(rawValue: "accept")
        public static let approve = Name(rawValue: "approve")
        public static let credential = Name(rawValue: "credential")
        public static let givenName = Name(rawValue: "givenName")
        public static let familyName = Name(rawValue: "familyName")
        public static let email = Name(rawValue: "email")
    }
}
