import LatchkeyCrypto

/// A device-linking code: 9 symbols of Crockford's base32 (no I, L, O or U), shown
/// `XXX-XXX-XXX`, single use, valid about 90 seconds and rotated while the export waits.
///
/// Typed input is forgiving (case, spaces, dashes, `O`→`0`, `I`/`L`→`1`), so a code read
/// off another screen survives the usual slips.
public struct TransferCode: Hashable, Sendable, CustomStringConvertible {
    /// The 9 canonical symbols.
    public let symbols: String

    public static let length = 9

    /// Parses a typed or displayed code; nil unless it is 9 symbols once normalised.
    public init?(_ typed: String) {
        guard let symbols = CrockfordBase32.normalise(typed), symbols.count == Self.length else { return nil }
        self.symbols = symbols
    }

    /// `XXX-XXX-XXX`.
    public var displayed: String {
        let characters = Array(symbols)
        return [characters[0..<3], characters[3..<6], characters[6..<9]].map { String($0) }.joined(separator: "-")
    }

    public var description: String { displayed }

    /// The code as a QR code (ISO/IEC 18004), to show beside the text.
    public func qrCode() throws -> QRCode {
        try QRCode(text: displayed)
    }
}
