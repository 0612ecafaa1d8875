import Foundation
import LatchkeyCrypto

/// The code e-mailed for a sign-up or a recovery, kept per target (an account for
/// recovery, an e-mail address for sign-up) rather than per flow (docs/SECURITY.md,
/// "Limits"). Every flow for one target checks the same code, so:
///
/// - starting flows for someone else's account sends them at most one mail per
///   ``ProviderConfiguration/enrollmentCodeResendInterval``, and never takes anything from
///   the owner: whoever starts, the code arrives in the owner's mailbox, where the owner's
///   own flow can use it;
/// - wrong guesses are counted per target, across flows and addresses.
///
/// Each mail carries two forms of one code: a short one to type (8 digits, 10⁻⁸ a guess,
/// at most ``ProviderConfiguration/maximumCodeFailuresPerAccountPerDay`` guesses a day
/// per target) and a long one (25 Crockford base32 symbols, 125 bits) that no cap
/// applies to but the per-address one, since it cannot be guessed. When guessers have
/// used up an account's short-code allowance, its owner still gets in with the long
/// form: the lock-out falls on the guessers.
struct MailedCode: Sendable {
    let short: String
    let long: String

    static let shortDigits = 8
    static let longSymbols = 25

    /// A fresh code (both forms).
    static func generate() throws -> MailedCode {
        let short = String(format: "%08u", try SecureRandom.uniform(below: 100_000_000))
        let long = try CrockfordBase32.randomSymbols(count: longSymbols)
        return MailedCode(short: short, long: long)
    }

    /// The long form as it is shown: five groups of five.
    var displayedLong: String {
        stride(from: 0, to: long.count, by: 5).map { offset in
            String(long.dropFirst(offset).prefix(5))
        }.joined(separator: "-")
    }

    /// Which form a typed code takes.
    enum Form: Sendable {
        case short(String)
        case long(String)
        case malformed
    }

    static func form(of typed: String) -> Form {
        let trimmed = typed.trimmingCharacters(in: .whitespaces)
        if trimmed.utf8.count == shortDigits, trimmed.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            return .short(trimmed)
        }
        if let symbols = CrockfordBase32.normalise(trimmed), symbols.count == longSymbols {
            return .long(symbols)
        }
        return .malformed
    }

    /// Stores `self` for `target` unless a code mailed less than `resendAfter` ago is
    /// still valid; true when stored, that is, when it must be mailed now.
    func store(for target: String, lifetime: TimeInterval, resendAfter: TimeInterval, now: Date, in transaction: any SQLTransaction) async throws -> Bool {
        let shortHash = try ProviderContext.hash(short)
        let longHash = try ProviderContext.hash(long)
        let recent = now.addingTimeInterval(-resendAfter)
        return try await transaction.first("""
            INSERT INTO mailed_codes (target, short_hash, long_hash, mailed_at, expires_at)
            VALUES (\(target), \(shortHash), \(longHash), \(now), \(now.addingTimeInterval(lifetime)))
            ON CONFLICT (target) DO UPDATE SET short_hash = excluded.short_hash, long_hash = excluded.long_hash,
                mailed_at = excluded.mailed_at, expires_at = excluded.expires_at
            WHERE mailed_codes.expires_at <= \(now) OR mailed_codes.mailed_at <= \(recent)
            RETURNING target
            """) != nil
    }

    /// Whether `form` is `target`'s live code, compared in constant time (a decoy target
    /// has none, and every code is wrong).
    static func matches(_ form: Form, target: String, now: Date, in transaction: any SQLTransaction) async throws -> Bool {
        let row = try await transaction.first("SELECT short_hash, long_hash FROM mailed_codes WHERE target = \(target) AND expires_at > \(now)")
        let typed: String
        let column: String
        switch form {
        case .short(let digits): (typed, column) = (digits, "short_hash")
        case .long(let symbols): (typed, column) = (symbols, "long_hash")
        case .malformed: (typed, column) = ("", "short_hash")
        }
        let expected = try row?.decode(column, as: Data.self) ?? Data(repeating: 0, count: 32)
        let matches = ConstantTime.isEqual(try ProviderContext.hash(typed), expected)
        if case .malformed = form { return false }
        return matches && row != nil
    }

    /// Spends `target`'s code: one code completes one flow.
    static func spend(target: String, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("DELETE FROM mailed_codes WHERE target = \(target)")
    }

    static func prune(now: Date, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("DELETE FROM mailed_codes WHERE expires_at <= \(now)")
    }
}
