#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Progress of one flow, published on ``Embedded/events()`` for an app's coordinator (the
/// way Okta's flow coordinator reports status), in the order things happen.
///
/// Events never carry secrets: no codes, tokens or keys.
public struct FlowEvent: Sendable {
    public enum Kind: Sendable {
        /// The operation began.
        case started
        /// The flow needs the step handler for this step.
        case stepRequested(FlowStep.Name)
        /// The step handler answered; the answer goes to the provider.
        case stepAnswered(FlowStep.Name)
        /// This credential (``Credential/id``) will sign.
        case credentialChosen(String)
        /// A credential was registered (``Credential/id``).
        case credentialRegistered(String)
        /// An import was submitted and waits for the exporting device's approval; the
        /// fingerprint is this device's new key, for the user to compare with what the
        /// other device shows.
        case importPending(ImportRequest)
        /// The provider redirected back with an authorization code.
        case codeReceived
        /// Tokens were received and the ID token validated.
        case tokensReceived
        /// The operation finished successfully.
        case completed
        /// The operation failed (or was cancelled: code ``LatchkeyError/Code/cancelled``).
        case failed(LatchkeyError)
    }

    /// Tells the events of concurrent flows apart.
    public var flowID: UUID
    /// The operation, e.g. `registerCredential`, `authenticate`.
    public var operation: String
    public var kind: Kind
    public var date: Date
}
