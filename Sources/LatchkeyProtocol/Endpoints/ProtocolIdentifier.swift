/// The rule for what travels in a provider's URLs: job, session and transfer ids and
/// capability tokens are 1 to 256 characters of RFC 3986 §2.3's unreserved set
/// (docs/PROTOCOL.md, "Client rules"). Step and field names use the same alphabet.
public enum ProtocolIdentifier {
    public static let maximumLength = 256

    /// Whether `text` is 1 to `maximumLength` unreserved characters.
    public static func isValid(_ text: some StringProtocol, maximumLength: Int = maximumLength) -> Bool {
        !text.isEmpty && text.utf8.count <= maximumLength && text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                true
            default:
                false
            }
        }
    }
}
