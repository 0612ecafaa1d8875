import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyWebAuthn

/// The token cache's record written and read member by member (``JSONObjectWriter``,
/// `JSONMembers`) instead of through `Codable`: every sign-in reads the record, replaces
/// its entry and writes it back, and `JSONDecoder`/`JSONEncoder` with an ID token's claims
/// tree cost more than the vault's own write (docs/PERFORMANCE.md, "Less per request").
///
/// The text is what `JSONEncoder` with `.sortedKeys` writes, but for `/`, which this writer
/// leaves as it is where `JSONEncoder` writes `\/`, and for numbers, which read back as the
/// same `Double`; records written by either read back alike (the tests decode each with
/// the other). Members it does not know are ignored, as `Decodable` ignores them.
extension DPoPKeyRecord {
    func encoded() throws -> Data {
        var writer = JSONObjectWriter(capacity: 1024 * tokens.count + 128)
        writer.string(Member.credential.rawValue, credential)
        writer.string(Member.kind.rawValue, kind)
        writer.jsonArray(Member.tokens.rawValue, try tokens.map { try $0.json() })
        return writer.finished()
    }

    static func decode(_ data: Data) -> DPoPKeyRecord? {
        guard let members = try? JSONMembers.parse(data), (try? members.string(Member.kind.rawValue)) == kind else { return nil }
        do {
            var record = DPoPKeyRecord(owner: try members.string(Member.credential.rawValue))
            record.tokens = try members.objects(Member.tokens.rawValue).map { try CachedTokens(json: $0) }
            return record
        } catch {
            return nil
        }
    }
}

extension CachedTokens {
    /// The entry as a JSON object, its members in their names' byte order.
    func json() throws -> [UInt8] {
        var writer = JSONObjectWriter(capacity: 1024)
        writer.string(Member.accessToken.rawValue, accessToken)
        if let claims {
            var object: [UInt8] = []
            try JSONValue.appendObject(claims, to: &object)
            writer.json(Member.claims.rawValue, object)
        }
        writer.string(Member.clientID.rawValue, clientID)
        try writer.number(Member.expiresAt.rawValue, ifPresent: expiresAt)
        writer.string(Member.grant.rawValue, ifPresent: grant)
        writer.string(Member.idToken.rawValue, ifPresent: idToken)
        writer.string(Member.issuer.rawValue, issuer)
        writer.string(Member.redirectURI.rawValue, redirectURI)
        writer.string(Member.refreshToken.rawValue, ifPresent: refreshToken)
        writer.string(Member.scope.rawValue, ifPresent: scope)
        writer.strings(Member.scopes.rawValue, scopes)
        try writer.number(Member.storedAt.rawValue, storedAt)
        writer.string(Member.tokenType.rawValue, tokenType)
        return writer.finishedBytes()
    }

    /// The entry `members` hold; throws when one it needs is missing or of the wrong kind.
    init(json members: JSONMembers) throws {
        issuer = try members.string(Member.issuer.rawValue)
        clientID = try members.string(Member.clientID.rawValue)
        redirectURI = try members.string(Member.redirectURI.rawValue)
        scopes = try members.strings(Member.scopes.rawValue)
        accessToken = try members.string(Member.accessToken.rawValue)
        tokenType = try members.string(Member.tokenType.rawValue)
        expiresAt = try members.optionalNumber(Member.expiresAt.rawValue)
        refreshToken = try members.optionalString(Member.refreshToken.rawValue)
        scope = try members.optionalString(Member.scope.rawValue)
        idToken = try members.optionalString(Member.idToken.rawValue)
        if let value = members.optionalValue(Member.claims.rawValue) {
            guard case .object(let claims)? = JSONValue(value) else { throw JSONMembers.bad(Member.claims.rawValue, "not an object") }
            self.claims = claims
        } else {
            claims = nil
        }
        storedAt = try members.number(Member.storedAt.rawValue)
        grant = try members.optionalString(Member.grant.rawValue)
    }
}

/// The members' names in the token cache's record, each spelled once: `Codable`'s
/// names for the same properties, which the records written before kept.
private enum Member: String {
    case accessToken, claims, clientID, credential, expiresAt, grant, idToken, issuer, kind, redirectURI, refreshToken, scope, scopes, storedAt
    case tokenType, tokens
}
