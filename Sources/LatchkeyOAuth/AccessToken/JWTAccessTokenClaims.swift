#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The claims of a JWT access token (RFC 9068 §2.2): one type for the provider that signs
/// them and the resource server that checks them offline (``JWTAccessTokenValidator``).
///
/// Why a resource server would want one: an opaque token is checked by asking the
/// provider (introspection, RFC 7662), a round trip per request; a JWT access token is
/// checked with the provider's published keys alone. The price is that a revoked token
/// stays acceptable offline until its `exp`, so such tokens live minutes.
public struct JWTAccessTokenClaims: Sendable, Hashable {
    /// The `typ` header (RFC 9068 §2.1), which keeps an access token from passing as an
    /// ID token or any other JWT, and the reverse.
    public static let type = "at+jwt"

    public let issuer: String
    public let subject: String
    /// The resources it is for (RFC 8707): a resource server accepts it only when it is one.
    public let audiences: [String]
    public let expiresAt: Date
    public let issuedAt: Date
    public let clientID: String
    /// `jti`: unique per token.
    public let tokenID: String
    public let scope: String?
    public let authTime: Date?
    /// RFC 9449 §6.1: the thumbprint of the DPoP key the token is bound to (`cnf.jkt`).
    public let dpopJKT: String?

    enum Name: String {
        case issuer = "iss", subject = "sub", audiences = "aud", expiresAt = "exp", issuedAt = "iat"
        case clientID = "client_id", tokenID = "jti", scope, authTime = "auth_time", confirmation = "cnf", jkt
    }

    /// Claims for a provider to sign.
    public init(
        issuer: String, subject: String, audiences: [String], expiresAt: Date, issuedAt: Date, clientID: String, tokenID: String,
        scope: String? = nil, authTime: Date? = nil, dpopJKT: String? = nil
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audiences = audiences
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.clientID = clientID
        self.tokenID = tokenID
        self.scope = scope
        self.authTime = authTime
        self.dpopJKT = dpopJKT
    }

    /// Claims read from a token's payload; a required claim missing or of the wrong type
    /// is `claimMissing`, naming it.
    public init(_ claims: [String: JSONValue]) throws {
        func missing(_ name: Name) -> OAuthError {
            OAuthError.claimMissing(reason: "access token claim \"\(name.rawValue)\" is missing or of the wrong type")
        }
        func text(_ name: Name) throws -> String {
            guard let value = claims[name.rawValue]?.stringValue, !value.isEmpty else { throw missing(name) }
            return value
        }
        func seconds(_ name: Name) throws -> Date {
            guard let value = claims[name.rawValue]?.numberValue, value.isFinite else { throw missing(name) }
            return Date(timeIntervalSince1970: value)
        }
        switch claims[Name.audiences.rawValue] {
        case .string(let one)?: audiences = [one]
        case .array(let many)?:
            let names = many.compactMap(\.stringValue)
            guard names.count == many.count, !names.isEmpty else { throw missing(.audiences) }
            audiences = names
        default: throw missing(.audiences)
        }
        issuer = try text(.issuer)
        subject = try text(.subject)
        expiresAt = try seconds(.expiresAt)
        issuedAt = try seconds(.issuedAt)
        clientID = try text(.clientID)
        tokenID = try text(.tokenID)
        if let scope = claims[Name.scope.rawValue] {
            guard let words = scope.stringValue else { throw missing(.scope) }
            self.scope = words
        } else {
            scope = nil
        }
        authTime = claims[Name.authTime.rawValue] == nil ? nil : try seconds(.authTime)
        if let confirmation = claims[Name.confirmation.rawValue] {
            guard let jkt = confirmation[Name.jkt.rawValue]?.stringValue else { throw missing(.confirmation) }
            dpopJKT = jkt
        } else {
            dpopJKT = nil
        }
    }

    /// The payload to sign: times in whole seconds, one audience as a string, members
    /// in sorted order.
    public var encodedJSON: Data {
        get throws {
            func seconds(_ date: Date) -> JSONValue { .number(Double(Int(date.timeIntervalSince1970))) }
            var members: [String: JSONValue] = [
                Name.issuer.rawValue: .string(issuer), Name.subject.rawValue: .string(subject),
                Name.audiences.rawValue: audiences.count == 1 ? .string(audiences[0]) : .array(audiences.map(JSONValue.string)),
                Name.expiresAt.rawValue: seconds(expiresAt), Name.issuedAt.rawValue: seconds(issuedAt),
                Name.clientID.rawValue: .string(clientID), Name.tokenID.rawValue: .string(tokenID),
            ]
            members[Name.scope.rawValue] = scope.map(JSONValue.string)
            members[Name.authTime.rawValue] = authTime.map(seconds)
            members[Name.confirmation.rawValue] = dpopJKT.map { .object([Name.jkt.rawValue: .string($0)]) }
            return try JSONValue.object(members).json()
        }
    }
}
