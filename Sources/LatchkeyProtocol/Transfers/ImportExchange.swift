public import LatchkeyWebAuthn

/// The importing side of device linking (docs/PROTOCOL.md section 5, "Importer").
public enum ImportExchange {
    /// `POST v1/transfers/redeem`.
    public struct Redeem: Codable, Hashable, Sendable {
        public var code: String

        public init(code: String) {
            self.code = code
        }
    }

    /// The answer to ``Redeem``: creation options for the exporter's identity.
    public struct Challenge: Codable, Hashable, Sendable {
        public var transfer: String
        public var publicKey: PublicKeyCredentialCreationOptionsJSON
        public var submit: String

        public init(transfer: String, publicKey: PublicKeyCredentialCreationOptionsJSON, submit: String) {
            self.transfer = transfer
            self.publicKey = publicKey
            self.submit = submit
        }
    }

    /// `POST <submit>`: the new key's registration and the name the exporter is shown.
    public struct Submission: Codable, Hashable, Sendable {
        public var registration: RegistrationResponseJSON
        public var deviceName: String

        public init(registration: RegistrationResponseJSON, deviceName: String) {
            self.registration = registration
            self.deviceName = deviceName
        }
    }

    /// `202` to ``Submission``: where to poll for the exporter's decision.
    public struct Accepted: Codable, Hashable, Sendable {
        public var state: TransferState
        public var status: String

        public init(state: TransferState, status: String) {
            self.state = state
            self.status = status
        }
    }
}
