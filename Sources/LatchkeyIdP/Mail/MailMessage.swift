import Foundation
import LatchkeyCrypto

/// One message as the provider sends it (RFC 5322): plain text in UTF-8, base64-encoded
/// so no line of the body can be read as SMTP or as a header, and a subject encoded as
/// RFC 2047 when it is not ASCII.
struct MailMessage: Sendable {
    var to: String
    var subject: String
    var body: String

    /// An address that can go in an envelope and a header unquoted: 3 to 254 bytes, one
    /// `@`, no spaces, controls, angle brackets, quotes or commas (RFC 5321 §4.1.2 allows
    /// more, which the provider has no use for).
    static func isPlainAddress(_ address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        return address.utf8.count >= 3 && address.utf8.count <= 254 && parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty
            && !address.unicodeScalars.contains { $0.properties.generalCategory == .control || " <>\"(),;:\\[]".unicodeScalars.contains($0) || $0.properties.isWhitespace }
    }

    /// The message with its headers, CRLF line ends, ready for SMTP DATA or sendmail.
    func rendered(from: String, now: Date = ProviderClock.now) throws -> Data {
        guard Self.isPlainAddress(to) else { throw MailError.invalidAddress("the recipient address cannot be sent as it is") }
        guard Self.isPlainAddress(from) else { throw MailError.invalidConfiguration("the sender address \(from) cannot be sent as it is") }
        let domain = from.split(separator: "@").last.map(String.init) ?? "localhost"
        let identifier = Base64URL.encode(try SecureRandom.bytes(count: 18))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        let encodedBody = Data(body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n").utf8)
            .base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        let headers = [
            "From: \(from)",
            "To: \(to)",
            "Subject: \(Self.encodedHeaderText(subject))",
            "Date: \(formatter.string(from: now))",
            "Message-ID: <\(identifier)@\(domain)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
        ]
        return Data((headers.joined(separator: "\r\n") + "\r\n\r\n" + encodedBody + "\r\n").utf8)
    }

    /// `text` as it may stand in a header: short ASCII without controls as it is,
    /// anything else as RFC 2047 encoded words (base64 of UTF-8, whole characters, each
    /// word within §2's 75 characters, folded), so no header can be injected.
    static func encodedHeaderText(_ text: String) -> String {
        let plain = text.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F }
        if plain, text.utf8.count <= 900 { return text }
        var words: [String] = []
        var chunk = ""
        for character in text.prefix(300) {
            if chunk.utf8.count + String(character).utf8.count > 45 {
                words.append(chunk)
                chunk = ""
            }
            chunk.append(character)
        }
        if !chunk.isEmpty { words.append(chunk) }
        return words.map { "=?UTF-8?B?\(Data($0.utf8).base64EncodedString())?=" }.joined(separator: "\r\n ")
    }
}
