/// A policy step (docs/PROTOCOL.md section 4): instead of the answer a client waits for,
/// a provider may answer `{"step": {"name", "submit", "fields", "message"}}`; the client
/// `POST`s a ``StepSubmission`` to `submit` and gets the awaited answer, or the step
/// again after a refused value.
public struct Step: Codable, Hashable, Sendable {
    public var name: Name
    /// Where the answer goes; on the provider's origin (the client checks).
    public var submit: String
    /// What to tell the user. Untrusted text: a client makes it safe before showing it.
    public var message: String?
    public var fields: [Field]

    public init(name: Name, submit: String, message: String? = nil, fields: [Field]) {
        self.name = name
        self.submit = submit
        self.message = message
        self.fields = fields
    }

    enum CodingKeys: String, CodingKey {
        case name, submit, message, fields
    }

    /// `fields` may be absent (no input: an acknowledgement).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(Name.self, forKey: .name)
        submit = try container.decode(String.self, forKey: .submit)
        message = try container.decodeIfPresent(String.self, forKey: .message)
        fields = try container.decodeIfPresent([Field].self, forKey: .fields) ?? []
    }
}

/// The envelope a step travels in: `{"step": {...}}`. Any answer of the protocol may be
/// one, so a client first looks for it and, when it is absent, reads the awaited type.
public struct StepReply: Codable, Hashable, Sendable {
    public var step: Step?

    public init(step: Step) {
        self.step = step
    }
}
