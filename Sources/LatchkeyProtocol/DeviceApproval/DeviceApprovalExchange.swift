public import LatchkeyWebAuthn

/// Approving a device's sign-in (RFC 8628 device grant) with a passkey from a device that
/// holds one (docs/PROTOCOL.md section 7): the user code in, what was asked and request
/// options bound to that code out; then the decision with an assertion over those options.
/// A code alone never approves or denies anything.
public enum DeviceApprovalExchange {
    /// `POST v1/device`: the code the person read off the device.
    public struct Lookup: Codable, Hashable, Sendable {
        public var userCode: String

        public init(userCode: String) {
            self.userCode = userCode
        }
    }

    /// What the device asked, for the person to check before deciding (device-code
    /// phishing: someone else may have started it), and the options to sign.
    public struct Request: Codable, Hashable, Sendable {
        /// `XXXX-XXXX`.
        public var userCode: String
        public var clientID: String
        /// The client's registered name, shown as untrusted text.
        public var clientName: String
        public var scope: [String]
        /// RFC 3339, when the device asked.
        public var requestedAt: String
        /// The network address the device asked from, as this provider saw it.
        public var requestedFrom: String
        /// RFC 3339, when the code expires.
        public var expiresAt: String
        /// Request options (WebAuthn L3 §5.5) whose challenge is bound to this code.
        public var publicKey: PublicKeyCredentialRequestOptionsJSON
        /// Where the ``Decision`` goes (on the provider's origin).
        public var submit: String
        /// For a sign-in to a host through `pam_latchkey` (section 13): the account, the
        /// service and the remote address the host asked about, to show before approving.
        public var login: PAMLoginDetail?

        public init(
            userCode: String, clientID: String, clientName: String, scope: [String], requestedAt: String, requestedFrom: String,
            expiresAt: String, publicKey: PublicKeyCredentialRequestOptionsJSON, submit: String, login: PAMLoginDetail? = nil
        ) {
            self.userCode = userCode
            self.clientID = clientID
            self.clientName = clientName
            self.scope = scope
            self.requestedAt = requestedAt
            self.requestedFrom = requestedFrom
            self.expiresAt = expiresAt
            self.publicKey = publicKey
            self.submit = submit
            self.login = login
        }
    }

    /// `approve` or `deny`.
    public struct Choice: RawRepresentable, Codable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let approve = Choice(rawValue: "approve")
        public static let deny = Choice(rawValue: "deny")
    }

    /// `POST <submit>`: the person's decision, signed.
    public struct Decision: Codable, Hashable, Sendable {
        public var decision: Choice
        public var credential: AuthenticationResponseJSON

        public init(decision: Choice, credential: AuthenticationResponseJSON) {
            self.decision = decision
            self.credential = credential
        }
    }

    /// The answer to a decision.
    public struct Decided: Codable, Hashable, Sendable {
        public var decision: Choice

        public init(decision: Choice) {
            self.decision = decision
        }
    }
}
