#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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
/// the other), under the same names (the types' `CodingKeys`). Members it does not know
/// are ignored, as `Decodable` ignores them.
extension DPoPKeyRecord {
    func encoded() throws -> Data {
        var writer = JSONObjectWriter(capacity: 1024 * tokens.count + 128)
        writer.string(CodingKeys.credential.rawValue, credential)
        writer.string(CodingKeys.kind.rawValue, kind)
        writer.jsonArray(CodingKeys.tokens.rawValue, try tokens.map { try $0.json() })
        return writer.finished()
    }

    static func decode(_ data: Data) -> DPoPKeyRecord? {
        guard let members = try? JSONMembers.parse(data), (try? members.string(CodingKeys.kind.rawValue)) == kind else { return nil }
        do {
            var record = DPoPKeyRecord(owner: try members.string(CodingKeys.credential.rawValue))
            record.tokens = try members.objects(CodingKeys.tokens.rawValue).map { try CachedTokens(json: $0) }
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
        writer.string(CodingKeys.accessToken.rawValue, accessToken)
        if let claims {
            var object: [UInt8] = []
            try JSONValue.appendObject(claims, to: &object)
            writer.json(CodingKeys.claims.rawValue, object)
        }
        writer.string(CodingKeys.clientID.rawValue, clientID)
        try writer.number(CodingKeys.expiresAt.rawValue, ifPresent: expiresAt)
        writer.string(CodingKeys.grant.rawValue, ifPresent: grant)
        writer.string(CodingKeys.idToken.rawValue, ifPresent: idToken)
        writer.string(CodingKeys.issuer.rawValue, issuer)
        writer.string(CodingKeys.redirectURI.rawValue, redirectURI)
        writer.string(CodingKeys.refreshToken.rawValue, ifPresent: refreshToken)
        writer.string(CodingKeys.resource.rawValue, ifPresent: resource)
        writer.string(CodingKeys.scope.rawValue, ifPresent: scope)
        writer.strings(CodingKeys.scopes.rawValue, scopes)
        try writer.number(CodingKeys.storedAt.rawValue, storedAt)
        writer.string(CodingKeys.tokenType.rawValue, tokenType)
        return writer.finishedBytes()
    }

    /// The entry `members` hold; throws when one it needs is missing or of the wrong kind.
    init(json members: JSONMembers) throws {
        issuer = try members.string(CodingKeys.issuer.rawValue)
        clientID = try members.string(CodingKeys.clientID.rawValue)
        redirectURI = try members.string(CodingKeys.redirectURI.rawValue)
        scopes = try members.strings(CodingKeys.scopes.rawValue)
        accessToken = try members.string(CodingKeys.accessToken.rawValue)
        tokenType = try members.string(CodingKeys.tokenType.rawValue)
        expiresAt = try members.optionalNumber(CodingKeys.expiresAt.rawValue)
        refreshToken = try members.optionalString(CodingKeys.refreshToken.rawValue)
        scope = try members.optionalString(CodingKeys.scope.rawValue)
        idToken = try members.optionalString(CodingKeys.idToken.rawValue)
        if let value = members.optionalValue(CodingKeys.claims.rawValue) {
            guard case .object(let claims)? = JSONValue(value) else { throw JSONMembers.bad(CodingKeys.claims.rawValue, "not an object") }
            self.claims = claims
        } else {
            claims = nil
        }
        storedAt = try members.number(CodingKeys.storedAt.rawValue)
        grant = try members.optionalString(CodingKeys.grant.rawValue)
        resource = try members.optionalString(CodingKeys.resource.rawValue)
    }
}

