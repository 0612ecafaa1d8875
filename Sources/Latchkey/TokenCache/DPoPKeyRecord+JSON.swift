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
        writer.string("credential", credential)
        writer.string("kind", kind)
        writer.jsonArray("tokens", try tokens.map { try $0.json() })
        return writer.finished()
    }

    static func decode(_ data: Data) -> DPoPKeyRecord? {
        guard let members = try? JSONMembers.parse(data), (try? members.string("kind")) == kind else { return nil }
        do {
            var record = DPoPKeyRecord(owner: try members.string("credential"))
            record.tokens = try members.objects("tokens").map { try CachedTokens(json: $0) }
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
        writer.string("accessToken", accessToken)
        if let claims {
            var object: [UInt8] = []
            try JSONValue.appendObject(claims, to: &object)
            writer.json("claims", object)
        }
        writer.string("clientID", clientID)
        try writer.number("expiresAt", ifPresent: expiresAt)
        writer.string("grant", ifPresent: grant)
        writer.string("idToken", ifPresent: idToken)
        writer.string("issuer", issuer)
        writer.string("redirectURI", redirectURI)
        writer.string("refreshToken", ifPresent: refreshToken)
        writer.string("scope", ifPresent: scope)
        writer.strings("scopes", scopes)
        try writer.number("storedAt", storedAt)
        writer.string("tokenType", tokenType)
        return writer.finishedBytes()
    }

    /// The entry `members` hold; throws when one it needs is missing or of the wrong kind.
    init(json members: JSONMembers) throws {
        issuer = try members.string("issuer")
        clientID = try members.string("clientID")
        redirectURI = try members.string("redirectURI")
        scopes = try members.strings("scopes")
        accessToken = try members.string("accessToken")
        tokenType = try members.string("tokenType")
        expiresAt = try members.optionalNumber("expiresAt")
        refreshToken = try members.optionalString("refreshToken")
        scope = try members.optionalString("scope")
        idToken = try members.optionalString("idToken")
        if let value = members.optionalValue("claims") {
            guard case .object(let claims)? = JSONValue(value) else { throw JSONMembers.bad("claims", "not an object") }
            self.claims = claims
        } else {
            claims = nil
        }
        storedAt = try members.number("storedAt")
        grant = try members.optionalString("grant")
    }
}
