import Foundation
import LatchkeyCrypto

/// Flow state handed to the client sealed, instead of stored (docs/SECURITY.md, "Limits"):
/// a request that has proved nothing (an `/authorize`, a transfer's first step) then
/// creates no row, so no number of them can fill a table and deny service to others. The
/// provider stores something only once the client has proved possession of a credential;
/// single use is enforced then, in `spent_tickets`.
///
/// A ticket is `base64url(version ‖ salt ‖ AES-256-GCM(nonce ‖ value ‖ tag))`, the value
/// JSON or, for the sessions a sign-in seals and opens every time, a fixed binary layout
/// (``TicketLayout``). Each ticket
/// has its own key, HKDF-SHA-256 (RFC 5869) of the provider's ticket secret with a fresh
/// 128-bit salt and the ticket's purpose as info, so a ticket minted for one step never
/// opens as another's and GCM's random-nonce limit (NIST SP 800-38D §8.3) never binds,
/// however many tickets are issued. The secret lives sealed in the store like the decoy
/// key, the same for every instance.
struct TicketSealer: Sendable {
    private let secret: SymmetricKey

    /// The longest ticket text accepted, before any decoding: bounds the work a forged one costs.
    static let maximumLength = 12 * 1024
    private static let version: UInt8 = 1
    private static let saltByteCount = 16

    init(secret: SymmetricKey) {
        self.secret = secret
    }

    /// `value`, sealed for `purpose` as JSON.
    func seal<Value: Encodable>(_ value: Value, purpose: String) throws -> String {
        try seal(bytes: JSONEncoder().encode(value), purpose: purpose)
    }

    /// `value`, sealed for its layout's purpose in its binary layout (``TicketLayout``).
    func seal(_ value: some TicketLayout) throws -> String {
        var writer = TicketWriter()
        value.write(to: &writer)
        return try seal(bytes: writer.bytes, purpose: type(of: value).purpose)
    }

    private func seal(bytes: some DataProtocol, purpose: String) throws -> String {
        // The salt and the GCM nonce in one draw: each draw from OpenSSL's generator costs
        // its locking and fork check again (docs/PERFORMANCE.md, "Less per request").
        let fresh = try SecureRandom.bytes(count: Self.saltByteCount + AESGCM.nonceByteCount)
        let salt = fresh.prefix(Self.saltByteCount)
        let key = try HKDF.deriveKey(inputKeyMaterial: secret, salt: salt, info: Data("latchkey ticket: \(purpose)".utf8), outputByteCount: 32)
        let box = try AESGCM.seal(bytes, using: key, nonce: Data(fresh.suffix(AESGCM.nonceByteCount)), authenticating: Data([Self.version]))
        return Base64URL.encode(Data([Self.version]) + salt + box.combined)
    }

    /// The value sealed in `text` for `purpose`, or nil for anything else: too long, not
    /// base64url, another version, another purpose, forged or altered.
    func open<Value: Decodable>(_ type: Value.Type, from text: String, purpose: String) -> Value? {
        guard let plaintext = open(text, purpose: purpose) else { return nil }
        return try? JSONDecoder().decode(type, from: plaintext)
    }

    /// The value sealed in `text` in `Value`'s layout, or nil for anything else, a layout
    /// that does not read back to its last byte included.
    func open<Value: TicketLayout>(_ type: Value.Type, from text: String) -> Value? {
        guard let plaintext = open(text, purpose: Value.purpose) else { return nil }
        var reader = TicketReader(plaintext)
        guard let value = Value(reading: &reader), reader.isAtEnd else { return nil }
        return value
    }

    private func open(_ text: String, purpose: String) -> Data? {
        guard text.utf8.count <= Self.maximumLength, let bytes = try? Base64URL.decode(text),
              bytes.count > 1 + Self.saltByteCount, bytes.first == Self.version
        else { return nil }
        let salt = bytes.dropFirst().prefix(Self.saltByteCount)
        guard let key = try? HKDF.deriveKey(inputKeyMaterial: secret, salt: salt, info: Data("latchkey ticket: \(purpose)".utf8), outputByteCount: 32),
              let box = try? AESGCM.SealedBox(combined: bytes.dropFirst(1 + Self.saltByteCount))
        else { return nil }
        return try? AESGCM.open(box, using: key, authenticating: Data([Self.version]))
    }
}
