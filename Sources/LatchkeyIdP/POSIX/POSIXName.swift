import LatchkeyOAuth
import LatchkeyProtocol

/// What a POSIX host can take as a user or group name, and as the other fields of a
/// passwd line (docs/PROTOCOL.md section 14).
///
/// Names follow Debian's `adduser` default (`NAME_REGEX`, `^[a-z][-a-z0-9_]*$`) and
/// `useradd`'s 32-byte limit: a lower-case letter first (a leading `-` reads as an option,
/// a leading digit as a numeric ID), then lower-case letters, digits, `_` and `-`. No
/// upper case (many tools fold it), no `:` or `,` (the separators of `/etc/passwd` and
/// `/etc/group`), no `/`, whitespace, control or non-ASCII characters (no bidi tricks in
/// `ls -l`). An identity whose username is none of these gets no POSIX account; the
/// error says why.
enum POSIXName {
    static let maximumBytes = 32

    /// Whether `name` is a POSIX user or group name.
    static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...maximumBytes).contains(bytes.count), (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[0]) else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
    }

    /// Refuses a name a POSIX host cannot take, with `invalid_posix_name`; `what` says
    /// whose name it is ("username", "group name").
    static func check(_ name: String, _ what: String) throws(ProviderError) {
        guard isValid(name) else {
            throw ProviderError.badRequest(
                .invalidPOSIXName,
                "\(what) is not a POSIX name: 1 to \(maximumBytes) bytes of lower-case letters, digits, _ and -, starting with a letter"
            )
        }
    }

    /// An absolute path for `home` or `shell`: at most 256 bytes of printable ASCII without
    /// `:` (a passwd line's separator), no `.` or `..` segment, no empty one.
    static func checkPath(_ path: String, _ what: String) throws(ProviderError) {
        let bytes = Array(path.utf8)
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard (2...256).contains(bytes.count), bytes[0] == UInt8(ascii: "/"),
              bytes.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ":") && $0 != UInt8(ascii: "\\") }),
              segments.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." })
        else {
            throw ProviderError.badRequest(
                .invalidPOSIXName, "\(what) must be an absolute path of at most 256 printable ASCII bytes, without :, spaces, empty, . or .. segments"
            )
        }
    }

    /// A GECOS field given by an admin: at most 256 bytes, printable, without `:`, control,
    /// format (bidi) or line-separating characters.
    static func checkGECOS(_ text: String) throws(ProviderError) {
        guard text.utf8.count <= 256, text.unicodeScalars.allSatisfy(isGECOSScalar) else {
            throw ProviderError.badRequest(.invalidPOSIXName, "gecos must be at most 256 bytes without :, control, format or line-separating characters")
        }
    }

    /// The GECOS a host is given for a display name it was not checked for: `:`, control
    /// and format characters become spaces, at most 256 bytes.
    static func gecos(fromDisplayName name: String) -> String {
        var out = String.UnicodeScalarView()
        var bytes = 0
        for scalar in name.unicodeScalars {
            let kept: Unicode.Scalar = isGECOSScalar(scalar) ? scalar : " "
            bytes += String(kept).utf8.count
            if bytes > 256 { break }
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
