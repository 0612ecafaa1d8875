#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyOAuth

extension AdminAPI {
    /// One admin operation: its method, its path template, what it takes and what it
    /// answers. The provider registers its routes from these, and `latchkey admin` and the
    /// tests call them, so a path or a message type is written once (docs/PROTOCOL.md,
    /// "Admin API").
    public struct Endpoint<Body: Codable & Sendable, Answer: Codable & Sendable>: Sendable {
        /// The HTTP method (``HTTPMethod``).
        public let method: String
        /// The path below the issuer, with `:name` for each parameter (the form the
        /// provider's router takes).
        public let template: String

        init(_ method: String, _ template: String) {
            self.method = method
            self.template = template
        }

        /// The names of the path's parameters, in order.
        public var parameterNames: [String] {
            template.split(separator: "/").filter { $0.hasPrefix(":") }.map { String($0.dropFirst()) }
        }

        /// The path with `values` in place of the parameters, in order, each escaped to one
        /// path segment (only letters, digits, `-` and `_` left as they are, so nothing in a
        /// value can climb a level or start a query). Nil when the
        /// count differs.
        public func path(_ values: String...) -> String? {
            path(values)
        }

        /// ``path(_:)-(String...)`` for values in an array.
        public func path(_ values: [String]) -> String? {
            var remaining = values[...]
            var segments: [String] = []
            for segment in template.split(separator: "/", omittingEmptySubsequences: false) {
                guard segment.hasPrefix(":") else {
                    segments.append(String(segment))
                    continue
                }
                guard let value = remaining.popFirst() else { return nil }
                segments.append(Self.escape(value))
            }
            return remaining.isEmpty ? segments.joined(separator: "/") : nil
        }

        static func escape(_ text: String) -> String {
            FormEncoding.escapePathSegment(text)
        }
    }

    /// The body of an operation that takes none, and the answer of one that says nothing.
    public struct Empty: Codable, Hashable, Sendable {
        public init() {}
    }

    /// The query parameters of ``listIdentities``: `username` (find by name), else a page
    /// of `limit` identities `after` an identity id.
    public enum IdentityQuery {
        public static let username = "username"
        public static let limit = "limit"
        public static let after = "after"
    }

    public static let createIdentity = Endpoint<IdentityCreation, IdentityCreated>(HTTPMethod.post, "admin/identities")
    public static let listIdentities = Endpoint<Empty, IdentityPage>(HTTPMethod.get, "admin/identities")
    /// By id or username.
    public static let identity = Endpoint<Empty, IdentityAnswer>(HTTPMethod.get, "admin/identities/:identity")
    /// Revokes the identity's credentials and tokens with it.
    public static let deleteIdentity = Endpoint<Empty, Deletion>(HTTPMethod.delete, "admin/identities/:identity")
    /// A bind or recovery link for an existing identity; the body may be empty.
    public static let createBindJob = Endpoint<BindJobRequest, BindJobCreated>(HTTPMethod.post, "admin/identities/:identity/bind-jobs")
    public static let credentials = Endpoint<Empty, CredentialList>(HTTPMethod.get, "admin/identities/:identity/credentials")
    /// The credential id in base64url.
    public static let revokeCredential = Endpoint<Empty, Revocation>(HTTPMethod.post, "admin/credentials/:credential/revoke")
    /// Withdraws a consent to a third-party client (``ConsentRevocation``); `404` when there was none.
    public static let revokeConsent = Endpoint<ConsentRevocation, Revocation>(HTTPMethod.post, "admin/identities/:identity/consents/revoke")
    public static let createResourceServer = Endpoint<ResourceServerCreation, ResourceServerCreated>(HTTPMethod.post, "admin/resource-servers")
    public static let deleteResourceServer = Endpoint<Empty, Deletion>(HTTPMethod.delete, "admin/resource-servers/:server")
    /// Registers a client (``Client``); `409 conflict` if the id is taken.
    public static let createClient = Endpoint<Client, Client>(HTTPMethod.post, "admin/clients")
    public static let listClients = Endpoint<Empty, ClientList>(HTTPMethod.get, "admin/clients")
    /// Deletes a client and the tokens issued to it.
    public static let deleteClient = Endpoint<Empty, Deletion>(HTTPMethod.delete, "admin/clients/:client")
    public static let outbox = Endpoint<Empty, Outbox>(HTTPMethod.get, "admin/outbox")
    public static let rotateSigningKey = Endpoint<Empty, KeyRotation>(HTTPMethod.post, "admin/signing-keys/rotate")
}
