/// The passwords and words people choose first, for ``SecretStrength``: a short list of
/// the most frequent entries of public breach corpora and of default credentials (in the
/// manner of the lists zxcvbn and NIST SP 800-63B §5.1.1.2 call for), lower case, three
/// or more letters. Short on purpose: a secret built of these is refused wherever the
/// list stops, since a guesser's list is far longer; what it catches is the obvious.
enum CommonPasswords {
    static let words: Set<String> = [
        "password", "passwort", "passw", "pass", "passphrase", "secret", "letmein", "welcome", "login",
        "admin", "administrator", "root", "toor", "user", "guest", "test", "testing", "default", "changeme",
        "change", "temp", "master", "access", "token", "key", "latchkey", "openssl", "server", "service",
        "system", "qwerty", "azerty", "qwertz", "iloveyou", "love", "lovely", "monkey", "dragon", "shadow",
        "sunshine", "princess", "football", "baseball", "soccer", "hockey", "batman", "superman", "starwars",
        "pokemon", "trustno", "freedom", "whatever", "hello", "hallo", "secure", "security", "private",
        "computer", "internet", "linux", "ubuntu", "debian", "google", "apple", "microsoft", "summer",
        "winter", "spring", "autumn", "monday", "friday", "january", "december", "michael", "jennifer",
        "jordan", "charlie", "thomas", "daniel", "ashley", "jessica", "andrew", "robert", "matthew", "joshua",
        "hunter", "ranger", "harley", "maggie", "buster", "tigger", "ginger", "pepper", "cookie", "cheese",
        "banana", "orange", "purple", "silver", "golden", "diamond", "killer", "mustang", "corvette",
        "ferrari", "porsche", "matrix", "ninja", "asdf", "zxcv", "poiuy", "mnbv", "correct", "horse",
        "battery", "staple", "company", "office", "money", "family", "lucky", "flower", "angel", "baby",
        "blue", "red", "black", "white", "green", "yellow", "open", "sesame", "opensesame", "please", "letme",
        "let", "demo", "example", "sample", "nothing", "none", "null",
    ]

    /// The longest entry, in scalars.
    static let longest = words.map { $0.unicodeScalars.count }.max() ?? 0
}
