#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// The claims of an ID token (OIDC Core §2, with `at_hash` of §3.1.3.6 and `amr` of RFC
/// 8176): one type for the provider that signs them and the client that validates them.
/// Every member is kept in ``all``, which is what is encoded.
public struct IDTokenClaims: Codable, Sendable, Hashable {
    public let issuer: String
    public let subject: String
    public let audiences: [String]
    public let expiresAt: Date
    public let issuedAt: Date
    public let authorizedParty: String?
    public let nonce: String?
    public let authTime: Date?
    public let accessTokenHash: String?
    /// RFC 8176 authentication method references, such as `pop` and `swk`.
    public let authenticationMethods: [String]?
    /// Every claim as received (or, for claims built here, as they will be sent).
    public let all: [String: JSONValue]

    enum CodingKeys: String, CodingKey, CaseIterable {
        case issuer = "iss"
        case subject = "sub"
        case audiences = "aud"
        case expiresAt = "exp"
        case issuedAt = "iat"
        case authorizedParty = "azp"
        case nonce
        case authTime = "auth_time"
        case accessTokenHash = "at_hash"
        case authenticationMethods = "amr"
    }

    /// Claims for a provider to sign.
    public init(
        issuer: String, subject: String, audiences: [String], expiresAt: Date, issuedAt: Date, authorizedParty: String? = nil,
        nonce: String? = nil, authTime: Date? = nil, accessTokenHash: String? = nil, authenticationMethods: [String]? = nil
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audiences = audiences
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.authorizedParty = authorizedParty
        self.nonce = nonce
        self.authTime = authTime
        self.accessTokenHash = accessTokenHash
        self.authenticationMethods = authenticationMethods
        func seconds(_ date: Date) -> JSONValue { .number(Double(Int(date.timeIntervalSince1970))) }
        var all: [String: JSONValue] = [
            CodingKeys.issuer.rawValue: .string(issuer), CodingKeys.subject.rawValue: .string(subject),
            CodingKeys.audiences.rawValue: audiences.count == 1 ? .string(audiences[0]) : .array(audiences.map(JSONValue.string)),
            CodingKeys.expiresAt.rawValue: seconds(expiresAt), CodingKeys.issuedAt.rawValue: seconds(issuedAt),
        ]
        all[CodingKeys.authorizedParty.rawValue] = authorizedParty.map(JSONValue.string)
        all[CodingKeys.nonce.rawValue] = nonce.map(JSONValue.string)
        all[CodingKeys.authTime.rawValue] = authTime.map(seconds)
        all[CodingKeys.accessTokenHash.rawValue] = accessTokenHash.map(JSONValue.string)
        all[CodingKeys.authenticationMethods.rawValue] = authenticationMethods.map { .array($0.map(JSONValue.string)) }
        self.all = all
    }

    /// Claims read from a JSON object; `package` for the facade's token cache, which keeps
    /// the claims it validated when the tokens arrived.
    package init(_ claims: [String: JSONValue]) throws {
        func missing(_ key: CodingKeys) -> OAuthError {
            OAuthError.claimMissing(reason: "ID token claim \"\(key.rawValue)\" is missing or of the wrong type")
        }
        guard let issuer = claims[CodingKeys.issuer.rawValue]?.stringValue else { throw missing(.issuer) }
        guard let subject = claims[CodingKeys.subject.rawValue]?.stringValue, !subject.isEmpty else { throw missing(.subject) }
        let audiences: [String]
        switch claims[CodingKeys.audiences.rawValue] {
        case .string(let single)?: audiences = [single]
        case .array(let many)?:
            audiences = many.compactMap(\.stringValue)
            guard audiences.count == many.count, !audiences.isEmpty else { throw missing(.audiences) }
        default: throw missing(.audiences)
        }
        guard let exp = claims[CodingKeys.expiresAt.rawValue]?.numberValue else { throw missing(.expiresAt) }
        guard let iat = claims[CodingKeys.issuedAt.rawValue]?.numberValue else { throw missing(.issuedAt) }
        func optionalString(_ key: CodingKeys) throws -> String? {
            guard let value = claims[key.rawValue] else { return nil }
            guard let text = value.stringValue else { throw missing(key) }
            return text
        }
        self.issuer = issuer
        self.subject = subject
        self.audiences = audiences
        self.expiresAt = Date(timeIntervalSince1970: exp)
        self.issuedAt = Date(timeIntervalSince1970: iat)
        self.authorizedParty = try optionalString(.authorizedParty)
        self.nonce = try optionalString(.nonce)
        self.accessTokenHash = try optionalString(.accessTokenHash)
        if let authTime = claims[CodingKeys.authTime.rawValue] {
            guard let seconds = authTime.numberValue else { throw missing(.authTime) }
            self.authTime = Date(timeIntervalSince1970: seconds)
        } else {
            self.authTime = nil
        }
        // Not one of the claims validation rests on: a malformed `amr` is left out, not refused.
        let methods = claims[CodingKeys.authenticationMethods.rawValue]?.arrayValue
        let names = methods?.compactMap(\.stringValue)
        self.authenticationMethods = names?.count == methods?.count ? names : nil
        self.all = claims
    }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode([String: JSONValue].self))
    }

    /// Writes ``all``: for claims built here, exactly the members named above (times in
    /// whole seconds, a single audience as a string); for decoded ones, what was received.
    public func encode(to encoder: any Encoder) throws {
        try JSONValue.object(all).encode(to: encoder)
    }

    /// ``all`` as `JSONEncoder` with sorted keys writes it, written directly
    /// (``JSONObjectWriter``) when every member is a string, a whole number of at most 2^53
    /// (not -0) or an array of strings, as the claims a provider signs are; through
    /// `JSONEncoder` otherwise. The provider signs one on every sign-in.
    public var encodedJSON: Data {
        get throws {
            var writer = JSONObjectWriter(capacity: 512)
            for key in all.keys.sorted() {
                switch all[key] {
                case .string(let text)?:
                    writer.string(key, text)
                case .number(let number)? where number == number.rounded(.towardZero) && abs(number) <= 9_007_199_254_740_992 && (number != 0 || number.sign == .plus):
                    writer.integer(key, Int(number))
                case .array(let values)? where values.allSatisfy({ $0.stringValue != nil }):
                    writer.strings(key, values.compactMap(\.stringValue))
                default:
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                    return try encoder.encode(self)
                }
            }
            return writer.finished()
        }
    }
}
