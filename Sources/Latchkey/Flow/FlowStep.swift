import LatchkeyProtocol

/// A step of a flow that needs the app: a provider policy (`verify-code`,
/// `accept-terms`, …) or a choice the library cannot make alone (`choose-credential`).
///
/// Steps follow docs/PROTOCOL.md section 4: the provider answers any request with
/// `{"step": {"name", "submit", "fields", "message"}}` instead of the expected object, and
/// the flow engine asks the app's ``Embedded/StepHandler`` for the answer. A new provider
/// policy needs no new app code as long as it uses steps the app knows.
public struct FlowStep: Sendable {
    /// A step's name, an open set. The names the engine knows are the static members.
    public struct Name: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
        public var description: String { rawValue }

        /// Several credentials fit the provider: which one signs? Answered automatically
        /// when exactly one fits. Answer with ``StepAnswer/credential(id:)``.
        public static let chooseCredential = Name(Step.Name.chooseCredential.rawValue)
        /// The provider sent a one-time code (by e-mail, say) and wants it back. Answer with
        /// ``StepAnswer/code(_:)``; a wrong code asks again, as often as the provider allows.
        public static let verifyCode = Name(Step.Name.verifyCode.rawValue)

        /// The provider wants profile fields (a sign-up: given name, family name,
        /// e-mail). Values the app passed in are in ``FlowStep/values``; the handler
        /// answers the rest with ``StepAnswer/init(fields:)``.
        public static let enrollProfile = Name(Step.Name.enrollProfile.rawValue)

        /// Another device asks to receive a credential by transfer code: approve or
        /// decline. ``FlowStep/importRequest`` says which device and key. Answer with
        /// ``StepAnswer/approve`` or ``StepAnswer/decline``.
        public static let confirmImport = Name(Step.Name.confirmImport.rawValue)

        /// The steps a provider may send that this engine can answer through a handler.
        static let fromProvider: Set<Name> = [.verifyCode, .enrollProfile]
    }

    /// One input the step asks for.
    public struct Field: Sendable, Hashable {
        public var name: String
        public var required: Bool
        /// A hint for the input, e.g. `one-time-code`.
        public var kind: String?

        public init(name: String, required: Bool, kind: String? = nil) {
            self.name = name
            self.required = required
            self.kind = kind
        }
    }

    public var name: Name
    /// What to tell the user, from the provider (e.g. "Enter the code sent to a…@example.com").
    public var message: String?
    public var fields: [Field]
    /// Field values already known (from the call that started the flow); a handler
    /// supplies the missing ones.
    public var values: [String: String] = [:]
    /// For ``Name/chooseCredential``: the credentials that fit, to pick from.
    public var candidates: [Credential]
    /// For ``Name/confirmImport``: the device asking.
    public var importRequest: ImportRequest?
    /// 1 for the first time the step is asked; more after a refused answer.
    public var attempt: Int
    /// Why the previous answer was refused (e.g. "wrong code, 4 attempts left").
    public var previousError: String?

    public init(
        name: Name,
        message: String? = nil,
        fields: [Field] = [],
        candidates: [Credential] = [],
        importRequest: ImportRequest? = nil,
        attempt: Int = 1,
        previousError: String? = nil
    ) {
        self.name = name
        self.message = message
        self.fields = fields
        self.candidates = candidates
        self.importRequest = importRequest
        self.attempt = attempt
        self.previousError = previousError
    }
}

/// The app's answer to a ``FlowStep``.
public struct StepAnswer: Sendable, Hashable {
    /// The values submitted for the step's fields, by field name.
    public var fields: [String: String]

    public init(fields: [String: String]) {
        self.fields = fields
    }

    /// The one-time code for ``FlowStep/Name/verifyCode``.
    public static func code(_ code: String) -> StepAnswer {
        StepAnswer(fields: [Step.Field.Name.code.rawValue: code])
    }

    /// Approves an import (``FlowStep/Name/confirmImport``).
    public static let approve = StepAnswer(fields: [Step.Field.Name.approve.rawValue: StepSubmission.yes])
    /// Declines an import (``FlowStep/Name/confirmImport``).
    public static let decline = StepAnswer(fields: [Step.Field.Name.approve.rawValue: StepSubmission.no])

    /// The credential (``Credential/id``) for ``FlowStep/Name/chooseCredential``.
    public static func credential(id: String) -> StepAnswer {
        StepAnswer(fields: [Step.Field.Name.credential.rawValue: id])
    }
}
