#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc

/// How many guesses a secret a person chose would take, in bits: the one estimate behind
/// the admin token's floor (`latchkey serve`) and a new vault's passphrase
/// (docs/SECURITY.md, "Secrets people choose").
///
/// Length times the alphabet's size (the old rule) rates `password` four times over at
/// over 150 bits; guessers try what people write first. So the secret is read as the
/// cheapest sequence of parts a guesser would try, in the manner of zxcvbn (Wheeler,
/// USENIX Security 2016), each part costing the bits of its kind:
///
/// | part | cost in bits |
/// |---|---|
/// | a character guessed blindly | log2 of the alphabet the whole secret uses (10, 16, 36, 64 or 95) |
/// | one character three or more times (`aaaa`) | the character, plus log2 of the count |
/// | a unit repeated (`abab`, `password` ×4) | the unit's cheapest single reading, plus log2 of the count |
/// | an alphabet, digit or keyboard-row sequence (`abcd`, `4321`, `qwerty`) | log2 of its alphabet, 1 for the direction, log2 of the length |
/// | a walk over neighbouring keys (`1q2w3e`, `zaq1`) | log2 of the keys, plus 2.3 a further key |
/// | a common password or word, also in capitals or with `0`→`o`-style swaps | 10, plus 1 for capitals and 1 for swaps |
/// | a year from 1900 to 2099 | 7.6 |
///
/// The estimate errs low for what looks made by a person and is exact for random
/// strings: 32 random bytes in base64url, hex or base64 keep their 256 bits but for a
/// chance run of three. Only the first ``maximumScalarsRead`` scalars are read.
public enum SecretStrength {
    /// Scalars read; the rest adds nothing (a floor is never that high).
    public static let maximumScalarsRead = 256

    /// The estimate and the kinds of part it found, cheapest reading first.
    public struct Estimate: Sendable, Hashable {
        /// log2 of the guesses the cheapest reading needs.
        public var bits: Double
        /// The patterns that reading used, each once, in order (`repeated character`,
        /// `repeated unit`, `sequence`, `keyboard walk`, `common word`, `year`); empty for
        /// a secret read only as blind guesses.
        public var patterns: [String]
    }

    /// The estimate for `secret`.
    public static func estimate(_ secret: String) -> Estimate {
        let scalars = Array(secret.unicodeScalars.prefix(maximumScalarsRead))
        guard !scalars.isEmpty else { return Estimate(bits: 0, patterns: []) }
        let keys = scalars.map(keyFold)
        let perCharacter = bitsPerCharacter(scalars)
        let count = scalars.count
        // best[i]: the cheapest reading of the first i scalars, and the pattern that ended it.
        var best = [(bits: Double, from: Int, pattern: String?)](repeating: (.infinity, 0, nil), count: count + 1)
        best[0] = (0, 0, nil)
        for start in 0..<count where best[start].bits.isFinite {
            func offer(_ end: Int, _ bits: Double, _ pattern: String?) {
                let total = best[start].bits + bits
                if total < best[end].bits { best[end] = (total, start, pattern) }
            }
            offer(start + 1, perCharacter, nil)
            for part in parts(at: start, scalars: scalars, keys: keys, perCharacter: perCharacter) {
                offer(part.end, part.bits, part.pattern)
            }
        }
        var patterns: [String] = []
        var position = count
        while position > 0 {
            if let pattern = best[position].pattern, !patterns.contains(pattern) { patterns.insert(pattern, at: 0) }
            position = best[position].from
        }
        return Estimate(bits: best[count].bits, patterns: patterns)
    }

    /// The bits per blindly guessed character: the smallest usual alphabet that holds the
    /// whole secret (digits, hex, one-case letters and digits, base64 or base64url,
    /// printable ASCII and beyond).
    static func bitsPerCharacter(_ scalars: [Unicode.Scalar]) -> Double {
        func all(_ test: (Unicode.Scalar) -> Bool) -> Bool { scalars.allSatisfy(test) }
        let digit: (Unicode.Scalar) -> Bool = { ("0"..."9").contains($0) }
        let lower: (Unicode.Scalar) -> Bool = { ("a"..."z").contains($0) }
        let upper: (Unicode.Scalar) -> Bool = { ("A"..."Z").contains($0) }
        if all(digit) { return log2(10) }
        if all({ digit($0) || ("a"..."f").contains($0) }) || all({ digit($0) || ("A"..."F").contains($0) }) { return 4 }
        if all({ digit($0) || lower($0) }) || all({ digit($0) || upper($0) }) { return log2(36) }
        if all({ digit($0) || lower($0) || upper($0) || $0 == "-" || $0 == "_" || $0 == "+" || $0 == "/" }) { return 6 }
        return log2(95)
    }

    // MARK: Parts

    private struct Part {
        var end: Int
        var bits: Double
        var pattern: String
    }

    /// Every pattern part that starts at `start`.
    private static func parts(at start: Int, scalars: [Unicode.Scalar], keys: [Unicode.Scalar], perCharacter: Double) -> [Part] {
        var found: [Part] = []
        let count = scalars.count
        // One character, three or more times.
        var run = start + 1
        while run < count, scalars[run] == scalars[start] { run += 1 }
        if run - start >= 3 {
            for end in (start + 3)...run { found.append(Part(end: end, bits: perCharacter + log2(Double(end - start)), pattern: "repeated character")) }
        }
        // A unit of two or more scalars, repeated.
        if count - start >= 4 {
            for unit in 2...((count - start) / 2) {
                var repeats = 1
                while start + (repeats + 1) * unit <= count,
                      scalars[(start + repeats * unit)..<(start + (repeats + 1) * unit)] == scalars[start..<(start + unit)] {
                    repeats += 1
                }
                // A unit of one character over and over is the run above.
                guard repeats >= 2, scalars[start..<(start + unit)].contains(where: { $0 != scalars[start] }) else { continue }
                let unitBits = singleReading(scalars: Array(scalars[start..<(start + unit)]), keys: Array(keys[start..<(start + unit)]), perCharacter: perCharacter)
                for times in 2...repeats {
                    found.append(Part(end: start + times * unit, bits: unitBits + log2(Double(times)), pattern: "repeated unit"))
                }
            }
        }
        found += sequences(at: start, keys: keys)
        found += walks(at: start, keys: keys)
        found += words(at: start, scalars: scalars)
        if start + 4 <= count, let year = Int(String(String.UnicodeScalarView(scalars[start..<(start + 4)]))), (1900...2099).contains(year) {
            found.append(Part(end: start + 4, bits: log2(200), pattern: "year"))
        }
        return found
    }

    /// A repeated unit's cost: its cheapest reading as one part or as blind guesses.
    private static func singleReading(scalars: [Unicode.Scalar], keys: [Unicode.Scalar], perCharacter: Double) -> Double {
        var bits = Double(scalars.count) * perCharacter
        for part in sequences(at: 0, keys: keys) + walks(at: 0, keys: keys) + words(at: 0, scalars: scalars) where part.end == scalars.count {
            bits = min(bits, part.bits)
        }
        if scalars.allSatisfy({ $0 == scalars[0] }) { bits = min(bits, perCharacter + log2(Double(scalars.count))) }
        return bits
    }

    /// Alphabets whose order people follow.
    private static let orders: [[Unicode.Scalar]] = [
        "abcdefghijklmnopqrstuvwxyz", "0123456789", "1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm",
    ].map { Array($0.unicodeScalars) }

    /// Steps of +1 or -1 through one of ``orders``, three or more long.
    private static func sequences(at start: Int, keys folded: [Unicode.Scalar]) -> [Part] {
        guard start + 3 <= folded.count else { return [] }
        var found: [Part] = []
        for order in orders {
            guard let first = order.firstIndex(of: folded[start]) else { continue }
            for step in [1, -1] {
                var end = start + 1
                var index = first
                while end < folded.count, index + step >= 0, index + step < order.count, order[index + step] == folded[end] {
                    index += step
                    end += 1
                }
                guard end - start >= 3 else { continue }
                for stop in (start + 3)...end {
                    found.append(Part(end: stop, bits: log2(Double(order.count)) + 1 + log2(Double(stop - start)), pattern: "sequence"))
                }
            }
        }
        return found
    }

    /// A US keyboard's keys by position: (column, row), rows staggered as on the keyboard.
    private static let keyPositions: [Unicode.Scalar: (x: Double, y: Double)] = {
        var positions: [Unicode.Scalar: (Double, Double)] = [:]
        for (row, keys) in ["`1234567890-=", "qwertyuiop[]\\", "asdfghjkl;'", "zxcvbnm,./"].enumerated() {
            let offset = [0, 1.5, 1.75, 2.25][row]
            for (column, key) in keys.unicodeScalars.enumerated() { positions[key] = (Double(column) + offset, Double(row)) }
        }
        return positions
    }()

    /// Whether two keys touch: beside each other in a row, or one of the two above or below.
    private static func adjacent(_ a: Unicode.Scalar, _ b: Unicode.Scalar) -> Bool {
        guard a != b, let p = keyPositions[a], let q = keyPositions[b] else { return false }
        let dy = abs(p.y - q.y)
        let dx = abs(p.x - q.x)
        return (dy == 0 && dx == 1) || (dy == 1 && dx <= 0.75)
    }

    /// The direction of a step between touching keys: the row step and the column's sign.
    private static func direction(_ a: Unicode.Scalar, _ b: Unicode.Scalar) -> (Int, Int) {
        guard let p = keyPositions[a], let q = keyPositions[b] else { return (0, 0) }
        return (Int(q.y - p.y), q.x > p.x ? 1 : q.x < p.x ? -1 : 0)
    }

    /// A walk over touching keys, three or more long: the first key, then about 2.3 bits
    /// (one of some five neighbours) for each step that turns and 0.6 for each that goes on
    /// the way the last went (`1qaz` is a column, cheaper than a zigzag).
    private static func walks(at start: Int, keys folded: [Unicode.Scalar]) -> [Part] {
        var found: [Part] = []
        var bits = log2(Double(keyPositions.count))
        var end = start + 1
        var last: (Int, Int)?
        while end < folded.count, adjacent(folded[end - 1], folded[end]) {
            let step = direction(folded[end - 1], folded[end])
            bits += last.map { $0 == step } == true ? 0.6 : 2.3
            last = step
            end += 1
            if end - start >= 3 { found.append(Part(end: end, bits: bits, pattern: "keyboard walk")) }
        }
        return found
    }

    /// Common passwords and words, three or more long.
    private static func words(at start: Int, scalars: [Unicode.Scalar]) -> [Part] {
        var found: [Part] = []
        let longest = min(scalars.count - start, CommonPasswords.longest)
        guard longest >= 3 else { return [] }
        let original = scalars[start..<(start + longest)]
        let folded = original.map(wordFold)
        for length in 3...longest {
            guard CommonPasswords.words.contains(String(String.UnicodeScalarView(folded.prefix(length)))) else { continue }
            let capitals = original.prefix(length).contains { ("A"..."Z").contains($0) } ? 1.0 : 0
            let swaps = zip(original.prefix(length), folded).contains { keyFold($0) != $1 } ? 1.0 : 0
            found.append(Part(end: start + length, bits: 10 + capitals + swaps, pattern: "common word"))
        }
        return found
    }

    /// The key a scalar is typed with: letters in lower case, shifted symbols as their
    /// unshifted key (`!` is `1`), for sequences and walks.
    private static func keyFold(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        if ("A"..."Z").contains(scalar) { return Unicode.Scalar(scalar.value + 32) ?? scalar }
        return shiftedKeys.firstIndex(of: scalar).map { unshiftedKeys[$0] } ?? scalar
    }

    private static let shiftedKeys = Array("~!@#$%^&*()_+{}|:\"<>?".unicodeScalars)
    private static let unshiftedKeys = Array("`1234567890-=[]\\;',./".unicodeScalars)

    /// Lower case, and the usual look-alike swaps undone (`0`→`o`, `@`→`a`, …), for
    /// matching words.
    private static func wordFold(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        switch scalar {
        case "A"..."Z": Unicode.Scalar(scalar.value + 32) ?? scalar
        case "@", "4": "a"
        case "$", "5": "s"
        case "0": "o"
        case "1", "!": "i"
        case "3": "e"
        case "7": "t"
        default: scalar
        }
    }
}
