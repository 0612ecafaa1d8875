/// Text from outside (usernames, display names, client names, the provider's own name, a
/// user code from the query) as it goes into a page: every value is escaped here and
/// nowhere is outside text written into HTML any other way (docs/SECURITY.md, "Browser
/// pages").
enum HTMLText {
    /// `text` with `& < > " '` as character references (HTML Living Standard §13.1.4:
    /// safe in element content and in quoted attribute values).
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// An outside value shown to a person: escaped, its invisible direction and control
    /// characters shown as `U+XXXX` (so "admin\u{202E}gepj.exe" cannot pass for another
    /// name: Unicode Technical Report #36 §2.1, Trojan Source), and isolated in `<bdi>`
    /// so whatever direction it has cannot reorder the page's own words around it.
    static func value(_ text: String) -> String {
        "<bdi>" + escape(visible(text)) + "</bdi>"
    }

    /// An outside value shown inside a quoted attribute (an input's prefilled `value`):
    /// escaped, with the same characters spelled out as in ``value(_:)``; an attribute
    /// cannot hold `<bdi>`, and an `<input>` isolates its text from the page's anyway.
    static func attribute(_ text: String) -> String {
        escape(visible(text))
    }

    /// `text` with its bidirectional formatting characters (UAX #9 §2) and C0/C1 controls
    /// spelled out.
    static func visible(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if isHidden(scalar) {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result += "[U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
