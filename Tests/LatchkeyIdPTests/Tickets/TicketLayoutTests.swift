import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import Testing

/// The sign-in and authorization challenge sessions travel sealed in a fixed binary layout
/// (``TicketLayout``): every member reads back exactly, and bytes that are not a whole
/// layout, short, long or with a bad flag, open as nothing.
@Suite("Tickets in a binary layout")
struct TicketLayoutTests {
    static let hostile = ["", "a\"b\\c", "\u{0}\u{1B}[2J\n\u{202E}", "é€😀", String(repeating: "x", count: 600)]

    static func signIns() -> [SignInSession] {
        hostile.flatMap { text in
            [
                SignInSession(
                    id: text, clientID: "client" + text, clientRegistration: text, redirectURI: "https://app.example/cb?" + text, state: text, nonce: text,
                    codeChallenge: text, dpopJKT: text, scope: "openid " + text, challenge: Data(text.utf8), allowedCredentials: [Data(), Data(text.utf8), Data([0xFF])],
                    expiresAt: Date(timeIntervalSinceReferenceDate: 812_345_678.123_456_7)
                ),
                SignInSession(
                    id: "s", clientID: text, clientRegistration: nil, redirectURI: text, state: nil, nonce: nil, codeChallenge: "c", dpopJKT: nil,
                    scope: text, challenge: Data(), allowedCredentials: [], expiresAt: Date(timeIntervalSince1970: -1.5)
                ),
            ]
        }
    }

    static func challenges() -> [ChallengeSession] {
        hostile.map { text in
            ChallengeSession(
                id: text, clientID: text, clientRegistration: text.isEmpty ? nil : text, scope: text, codeChallenge: text, dpopJKT: text.isEmpty ? nil : text,
                challenge: Data(repeating: 7, count: 32), allowedCredentials: text.isEmpty ? [] : [Data(text.utf8), Data(repeating: 1, count: 64)],
                expiresAt: Date(timeIntervalSinceReferenceDate: 812_345_678.5)
            )
        }
    }

    private static func bytes(_ value: some TicketLayout) -> [UInt8] {
        var writer = TicketWriter()
        value.write(to: &writer)
        return Array(writer.bytes)
    }

    private static func same(_ a: SignInSession, _ b: SignInSession) -> Bool {
        a.id == b.id && a.clientID == b.clientID && a.clientRegistration == b.clientRegistration && a.redirectURI == b.redirectURI
            && a.state == b.state && a.nonce == b.nonce && a.codeChallenge == b.codeChallenge && a.dpopJKT == b.dpopJKT && a.scope == b.scope
            && a.challenge == b.challenge && a.allowedCredentials == b.allowedCredentials && a.expiresAt == b.expiresAt
    }

    private static func same(_ a: ChallengeSession, _ b: ChallengeSession) -> Bool {
        a.id == b.id && a.clientID == b.clientID && a.clientRegistration == b.clientRegistration && a.scope == b.scope
            && a.codeChallenge == b.codeChallenge && a.dpopJKT == b.dpopJKT && a.challenge == b.challenge
            && a.allowedCredentials == b.allowedCredentials && a.expiresAt == b.expiresAt
    }

    @Test("sealed and opened, every member of both sessions comes back exactly, absent ones absent")
    func roundTrip() throws {
        let sealer = TicketSealer(secret: try SymmetricKey.random())
        for session in Self.signIns() {
            let opened = try #require(sealer.open(SignInSession.self, from: try sealer.seal(session)))
            #expect(Self.same(opened, session))
        }
        for session in Self.challenges() {
            let opened = try #require(sealer.open(ChallengeSession.self, from: try sealer.seal(session)))
            #expect(Self.same(opened, session))
        }
    }

    @Test("a ticket of one session does not open as the other, nor under another secret")
    func purposes() throws {
        let sealer = TicketSealer(secret: try SymmetricKey.random())
        let signIn = try sealer.seal(Self.signIns()[0])
        let challenge = try sealer.seal(Self.challenges()[1])
        #expect(sealer.open(ChallengeSession.self, from: signIn) == nil)
        #expect(sealer.open(SignInSession.self, from: challenge) == nil)
        #expect(TicketSealer(secret: try SymmetricKey.random()).open(SignInSession.self, from: signIn) == nil)
    }

    @Test("each seal draws a fresh salt and nonce: the same session sealed 200 times gives 200 salts and 200 nonces, none the other's")
    func freshSaltAndNonce() throws {
        let sealer = TicketSealer(secret: try SymmetricKey.random())
        let session = Self.challenges()[0]
        var salts = Set<Data>()
        var nonces = Set<Data>()
        for _ in 0..<200 {
            // version (1) ‖ salt (16) ‖ nonce (12) ‖ ciphertext ‖ tag
            let bytes = try Base64URL.decode(try sealer.seal(session))
            salts.insert(Data(bytes.dropFirst(1).prefix(16)))
            nonces.insert(Data(bytes.dropFirst(17).prefix(12)))
        }
        #expect(salts.count == 200 && nonces.count == 200)
        #expect(salts.allSatisfy { salt in !nonces.contains(salt.prefix(12)) && !nonces.contains(salt.suffix(12)) })
    }

    @Test("every truncation, one byte more, a bad optional flag, a forged length or count, and a non-finite date read as nothing")
    func strictReading() throws {
        let whole = Self.bytes(Self.signIns()[3])
        var reader = TicketReader(whole)
        #expect(SignInSession(reading: &reader) != nil && reader.isAtEnd)
        for count in 0..<whole.count {
            var short = TicketReader(whole.prefix(count))
            let value = SignInSession(reading: &short)
            #expect(value == nil || !short.isAtEnd, "truncated to \(count) bytes")
        }
        var long = TicketReader(whole + [0])
        #expect(SignInSession(reading: &long) == nil || !long.isAtEnd, "a trailing byte")

        // id "s" (4 + 1 bytes), clientID (4 + n), then clientRegistration's flag.
        var flagged = whole
        let flagOffset = 5 + 4 + Self.signIns()[3].clientID.utf8.count
        #expect(flagged[flagOffset] == 0)
        flagged[flagOffset] = 2
        var badFlag = TicketReader(flagged)
        #expect(SignInSession(reading: &badFlag) == nil)

        var forgedLength = TicketReader([0xFF, 0xFF, 0xFF, 0xFF, 0x61])
        #expect(forgedLength.text() == nil)
        var forgedCount = TicketReader([0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0])
        #expect(forgedCount.dataList() == nil)
        var notUTF8 = TicketReader([0, 0, 0, 2, 0xC3, 0x28])
        #expect(notUTF8.text() == nil)
        var infinity = TicketReader(withUnsafeBytes(of: Double.infinity.bitPattern.bigEndian) { Array($0) })
        #expect(infinity.date() == nil)
        var nan = TicketReader(withUnsafeBytes(of: Double.nan.bitPattern.bigEndian) { Array($0) })
        #expect(nan.date() == nil)
    }
}
