import LatchkeyProtocol

/// A profile field a provider's sign-up asks for (the `enroll-profile` step). Open-ended:
/// a provider may ask for others, by name.
public struct ProfileField: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let name: String
    public init(_ name: String) { self.name = name }
    public init(stringLiteral value: String) { name = value }
    public var description: String { name }

    public static let givenName = ProfileField(Step.Field.Name.givenName.rawValue)
    public static let familyName = ProfileField(Step.Field.Name.familyName.rawValue)
    public static let email = ProfileField(Step.Field.Name.email.rawValue)
}
