#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One PEM block (RFC 7468): `-----BEGIN label-----`, base64 of DER, `-----END label-----`.
///
/// Parsing is strict: exactly one block, the expected label, only white space around
/// it, standard base64 with line breaks allowed, and a size bound.
struct PEMDocument {
    static let maximumTextSize = 64 * 1024

    let label: String
    let der: Data

    init(label: String, der: Data) {
        self.label = label
        self.der = der
    }

    init(parsing text: String, expectedLabel: String) throws {
        guard text.utf8.count <= Self.maximumTextSize else {
            throw CryptoError.invalidEncoding(reason: "PEM text over \(Self.maximumTextSize) bytes")
        }
        let begin = "-----BEGIN \(expectedLabel)-----"
        let end = "-----END \(expectedLabel)-----"
        let trimmed = text.trimmingWhitespace()
        guard trimmed.hasPrefix(begin), trimmed.hasSuffix(end), trimmed.count >= begin.count + end.count else {
            throw CryptoError.invalidEncoding(reason: "not a single PEM \"\(expectedLabel)\" block")
        }
        let body = trimmed.utf8.dropFirst(begin.utf8.count).dropLast(end.utf8.count)
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        let symbols = body.filter { !whitespace.contains($0) }
        guard !symbols.contains(UInt8(ascii: "-")) else {
            throw CryptoError.invalidEncoding(reason: "more than one PEM block")
        }
        self.label = expectedLabel
        self.der = try Base64Codec.decode(symbols, table: Base64Codec.standardValues, padded: true)
    }

    /// The block with 64-character lines (RFC 7468 §2).
    var pemString: String {
        let base64 = Array(Base64Codec.encode(der, table: Base64Codec.standardSymbols, padding: true).utf8)
        var lines = ["-----BEGIN \(label)-----"]
        var index = 0
        while index < base64.count {
            lines.append(String(decoding: base64[index..<min(index + 64, base64.count)], as: UTF8.self))
            index += 64
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }
}
