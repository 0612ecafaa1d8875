/// A step's answer, `{field: value, ...}` with string values (docs/PROTOCOL.md
/// section 4), `POST`ed to the step's `submit`.
public struct StepSubmission: Codable, Hashable, Sendable {
    public var values: [String: String]

    public init(_ values: [String: String]) {
        self.values = values
    }

    public init(_ field: Step.Field.Name, _ value: String) {
        self.values = [field.rawValue: value]
    }

    /// The value of a yes/no field (`accept`, `approve`) that says yes; anything else is no.
    public static let yes = "true"
    public static let no = "false"

    public subscript(field: Step.Field.Name) -> String? {
        values[field.rawValue]
    }

    public init(from decoder: any Decoder) throws {
        values = try decoder.singleValueContainer().decode([String: String].self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(values)
    }
}
