/// A device grant's user code as the reference provider makes them (RFC 8628 §6.1): 8
/// characters from the 20 consonants `BCDFGHJKLMNPQRSTVWXZ` (no vowels, so no words; about
/// 34.6 bits), shown as `XXXX-XXXX`, and read back without regard to case, dashes or
/// spaces, as §6.1 advises. Clients use it to tidy what a person types before sending it.
public enum DeviceUserCode {
    public static let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ")
    public static let length = 8

    /// The 8 characters of `typed` (case, dashes and spaces ignored), or nil when it is
    /// not a code of this form.
    public static func normalise(_ typed: String) -> String? {
        guard typed.utf8.count <= 64 else { return nil }
        let characters = typed.uppercased().filter { $0 != "-" && $0 != " " }
        guard characters.count == length, characters.allSatisfy(alphabet.contains) else { return nil }
        return String(characters)
    }

    /// `XXXX-XXXX`.
    public static func display(_ normalised: String) -> String {
        guard normalised.count == length else { return normalised }
        return String(normalised.prefix(4)) + "-" + String(normalised.suffix(4))
    }
}
