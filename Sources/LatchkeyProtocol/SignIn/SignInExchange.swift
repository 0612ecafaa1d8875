public import LatchkeyWebAuthn

/// Signing in (docs/PROTOCOL.md section 3): `/authorize` names the authenticate URL, which
/// gives request options and takes the assertion.
public enum SignInExchange {
    /// `GET /authorize` with `Accept: application/json`.
    public struct Started: Codable, Hashable, Sendable {
        public var authenticateURL: String

        public init(authenticateURL: String) {
            self.authenticateURL = authenticateURL
        }
    }

    /// `GET <authenticateURL>`: the request options, where the assertion goes, and the
    /// OAuth client the sign-in is for.
    public struct Challenge: Codable, Hashable, Sendable {
        public var publicKey: PublicKeyCredentialRequestOptionsJSON
        public var submit: String
        public var application: String?

        public init(publicKey: PublicKeyCredentialRequestOptionsJSON, submit: String, application: String?) {
            self.publicKey = publicKey
            self.submit = submit
            self.application = application
        }
    }

    /// The answer to the assertion: the client's redirect URI with `code`, `state`, `iss`.
    public struct Completed: Codable, Hashable, Sendable {
        public var redirectURL: String

        public init(redirectURL: String) {
            self.redirectURL = redirectURL
        }
    }

    /// The answer to a verified assertion for a third-party client (a client ID metadata
    /// document) the person has not consented to yet: what to show, and where the
    /// decision goes (docs/PROTOCOL.md, "Consent for third-party clients").
    public struct ConsentRequired: Codable, Hashable, Sendable {
        public var consent: Prompt

        public init(consent: Prompt) {
            self.consent = consent
        }

        public struct Prompt: Codable, Hashable, Sendable {
            /// The client's own name: text a stranger wrote, to be shown as such.
            public var clientName: String
            /// The client's id (its metadata document's URL).
            public var clientID: String
            /// The host the redirect returns to.
            public var redirectHost: String
            /// The resource the tokens would be for (RFC 8707), if any.
            public var resource: String?
            public var scopes: [String]
            /// Sealed; posted back with the decision.
            public var ticket: String
            public var submit: String

            public init(clientName: String, clientID: String, redirectHost: String, resource: String?, scopes: [String], ticket: String, submit: String) {
                self.clientName = clientName
                self.clientID = clientID
                self.redirectHost = redirectHost
                self.resource = resource
                self.scopes = scopes
                self.ticket = ticket
                self.submit = submit
            }
        }
    }

    /// `POST <submit>` of a ``ConsentRequired``: the person's decision; answered with
    /// ``Completed`` (the client's redirect, with a code or `access_denied`).
    public struct ConsentDecision: Codable, Hashable, Sendable {
        public enum Decision: String, Codable, Sendable {
            case approve, deny
        }

        public var ticket: String
        public var decision: Decision

        public init(ticket: String, decision: Decision) {
            self.ticket = ticket
            self.decision = decision
        }
    }
}
