import Foundation
import LatchkeyCrypto

/// Server nonces for DPoP proofs (RFC 9449 §8, §9; `serve --require-dpop-nonce`), so a
/// proof made ahead of time by whoever briefly held the key is useless later. Stateless
/// and the same on every instance: a nonce is a time period's number and an HMAC of it
/// under a store secret; the current and the previous period's nonces are accepted, so a
/// nonce lives between one and two periods.
struct DPoPNonces: Sendable {
    let key: SymmetricKey
    static let period: TimeInterval = 300

    /// The nonce to hand out now (in `DPoP-Nonce`).
    func current(now: Date) throws -> String {
        try nonce(period: Self.periodNumber(now))
    }

    /// Whether `nonce` is this period's or the previous one's.
    func isValid(_ nonce: String, now: Date) -> Bool {
        guard nonce.utf8.count <= 64 else { return false }
        let period = Self.periodNumber(now)
        return [period, period - 1].contains { candidate in
            guard let expected = try? self.nonce(period: candidate) else { return false }
            return ConstantTime.isEqual(Data(expected.utf8), Data(nonce.utf8))
        }
    }

    private func nonce(period: Int64) throws -> String {
        let number = withUnsafeBytes(of: period.bigEndian) { Data($0) }
        let mac = try HMAC.authenticationCode(for: Data("latchkey dpop nonce".utf8) + number, using: key)
        return Base64URL.encode(number + mac.prefix(16))
    }

    private static func periodNumber(_ now: Date) -> Int64 {
        Int64((now.timeIntervalSince1970 / period).rounded(.down))
    }
}
