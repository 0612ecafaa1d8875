/// What a POSIX host can take as a user or group name, and as the other fields of a
/// passwd line (docs/PROTOCOL.md section 14). The provider refuses anything else when an
/// admin sets it; a host (`latchkey host`) checks every value again when the directory
/// arrives, since it believes nothing a network answer says.
///
/// Names follow Debian's `adduser` default (`NAME_REGEX`, `^[a-z][-a-z0-9_]*$`) and
/// `useradd`'s 32-byte limit: a lower-case letter first (a leading `-` reads as an option,
/// a leading digit as a numeric ID), then lower-case letters, digits, `_` and `-`. No
/// upper case (many tools fold it), no `:` or `,` (the separators of `/etc/passwd` and
/// `/etc/group`), no `/`, whitespace, control or non-ASCII characters (no bidi tricks in
/// `ls -l`).
public enum POSIXName {
    public static let maximumBytes = 32
    /// The longest `home` or `shell`, and the longest GECOS.
    public static let maximumPathBytes = 256
    public static let maximumGECOSBytes = 256

    /// Whether `name` is a POSIX user or group name.
    public static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...maximumBytes).contains(bytes.count), (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[0]) else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    /// Whether `path` can be a `home` or `shell`: absolute, at most 256 bytes of printable
    /// ASCII without `:` (a passwd line's separator) or `\`, no `.`, `..` or empty segment.
    public static func isValidPath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        return (2...maximumPathBytes).contains(bytes.count) && bytes[0] == UInt8(ascii: "/")
            && bytes.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ":") && $0 != UInt8(ascii: "\\") })
            && segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." })
    }

    /// Whether `text` can be a GECOS field: at most 256 bytes without `:`, control, format
    /// (bidi) or line-separating characters.
    public static func isValidGECOS(_ text: String) -> Bool {
        text.utf8.count <= maximumGECOSBytes && text.unicodeScalars.allSatisfy(isGECOSScalar)
    }

    /// The GECOS a host is given for a display name it was not checked for: `:`, control
    /// and format characters become spaces, at most 256 bytes.
    public static func gecos(fromDisplayName name: String) -> String {
        var out = String.UnicodeScalarView()
        var bytes = 0
        for scalar in name.unicodeScalars {
            let kept: Unicode.Scalar = isGECOSScalar(scalar) ? scalar : " "
            bytes += String(kept).utf8.count
            if bytes > maximumGECOSBytes { break }
            out.append(kept)
        }
        return String(out)
    }

    private static func isGECOSScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: false
        default: scalar != ":"
        }
    }
}
