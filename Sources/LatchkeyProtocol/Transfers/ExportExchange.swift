public import LatchkeyCrypto
public import LatchkeyWebAuthn

/// The exporting side of device linking (docs/PROTOCOL.md section 5, "Exporter").
public enum ExportExchange {
    /// `POST v1/transfers`: the credential to export, base64url.
    public struct Begin: Codable, Hashable, Sendable {
        public var credential: String

        public init(credential: String) {
            self.credential = credential
        }
    }

    /// `201` to ``Begin``: options allowing only that credential, to prove possession.
    public struct Challenge: Codable, Hashable, Sendable {
        public var transfer: String
        public var publicKey: PublicKeyCredentialRequestOptionsJSON
        public var submit: String

        public init(transfer: String, publicKey: PublicKeyCredentialRequestOptionsJSON, submit: String) {
            self.transfer = transfer
            self.publicKey = publicKey
            self.submit = submit
        }
    }

    /// `201` to the assertion: the first code, and the exporter's poll and cancel URLs.
    public struct Opened: Codable, Hashable, Sendable {
        public var transfer: String
        public var code: String
        /// Seconds since 1970.
        public var codeExpiresAt: Int
        public var status: String
        public var cancel: String

        public init(transfer: String, code: String, codeExpiresAt: Int, status: String, cancel: String) {
            self.transfer = transfer
            self.code = code
            self.codeExpiresAt = codeExpiresAt
            self.status = status
            self.cancel = cancel
        }
    }

    /// `GET <status>`: the exporter's poll. `waiting` carries the current code;
    /// `import-requested` the importer, the approval options, and where to answer.
    public struct Status: Codable, Hashable, Sendable {
        public var state: TransferState
        public var code: String?
        public var codeExpiresAt: Int?
        public var importer: Importer?
        public var publicKey: PublicKeyCredentialRequestOptionsJSON?
        public var approve: String?
        public var decline: String?

        public init(
            state: TransferState,
            code: String? = nil,
            codeExpiresAt: Int? = nil,
            importer: Importer? = nil,
            publicKey: PublicKeyCredentialRequestOptionsJSON? = nil,
            approve: String? = nil,
            decline: String? = nil
        ) {
            self.state = state
            self.code = code
            self.codeExpiresAt = codeExpiresAt
            self.importer = importer
            self.publicKey = publicKey
            self.approve = approve
            self.decline = decline
        }
    }

    /// The device asking to import, as the provider describes it. The exporter recomputes
    /// the thumbprint and the approval challenge from these values itself.
    public struct Importer: Codable, Hashable, Sendable {
        public var deviceName: String
        /// Base64url.
        public var credentialID: String
        public var publicKey: JSONWebKey
        /// The RFC 7638 thumbprint of `publicKey`, base64url.
        public var thumbprint: String
        /// Base64url; bound into the approval challenge.
        public var nonce: String

        public init(deviceName: String, credentialID: String, publicKey: JSONWebKey, thumbprint: String, nonce: String) {
            self.deviceName = deviceName
            self.credentialID = credentialID
            self.publicKey = publicKey
            self.thumbprint = thumbprint
            self.nonce = nonce
        }
    }
}
