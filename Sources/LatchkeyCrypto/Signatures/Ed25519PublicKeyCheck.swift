/// Which Ed25519 public keys from outside are refused before OpenSSL sees them: points
/// of small order and encodings that are not canonical (RFC 8032 §5.1.3 decodes a `y`
/// reduced modulo p, so `y ≥ p` names a point twice).
///
/// Why: a small-order key has signatures anyone can make. With `A` the identity,
/// `R` the identity and `S = 0` satisfy `[S]B = R + [k]A` for every message; with `A` of
/// order 8, `[k]A` takes eight values, so such a forgery holds for one message in eight.
/// A certificate or a credential for such a key vouches for signatures nobody made. Keys
/// arrive from SSH wire data, JWKs, COSE keys and SubjectPublicKeyInfo; all of them meet
/// this check where a ``VerifyingKey`` is made (one door:
/// `OpenSSLKeys.importEd25519(publicKey:)`, and the SubjectPublicKeyInfo parser).
///
/// The eight points of order 1, 2, 4 and 8 have five `y` coordinates (the sign of `x`
/// tells the pairs apart): 0 (order 4), 1 (the identity), p − 1 (order 2), and the two of
/// the order-8 points, whose `y` satisfies `y² = −x²` with `d·x⁴ − 2x² − 1 = 0` (computed
/// from the curve equation of RFC 8032 §5.1, and the same as libsodium's list).
enum Ed25519PublicKeyCheck {
    /// Little-endian `y` of the small-order points, the sign bit clear.
    private static let smallOrderY: [[UInt8]] = [
        [UInt8](repeating: 0, count: 32),
        [1] + [UInt8](repeating: 0, count: 31),
        [0xEC] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],
        [
            0x26, 0xE8, 0x95, 0x8F, 0xC2, 0xB2, 0x27, 0xB0, 0x45, 0xC3, 0xF4, 0x89, 0xF2, 0xEF, 0x98, 0xF0,
            0xD5, 0xDF, 0xAC, 0x05, 0xD3, 0xC6, 0x33, 0x39, 0xB1, 0x38, 0x02, 0x88, 0x6D, 0x53, 0xFC, 0x05,
        ],
        [
            0xC7, 0x17, 0x6A, 0x70, 0x3D, 0x4D, 0xD8, 0x4F, 0xBA, 0x3C, 0x0B, 0x76, 0x0D, 0x10, 0x67, 0x0F,
            0x2A, 0x20, 0x53, 0xFA, 0x2C, 0x39, 0xCC, 0xC6, 0x4E, 0xC7, 0xFD, 0x77, 0x92, 0xAC, 0x03, 0x7A,
        ],
    ]

    /// Why `encoded` (32 bytes) is refused, or nil when it is an acceptable public key.
    static func refusal(_ encoded: [UInt8]) -> String? {
        guard encoded.count == 32 else { return "an Ed25519 public key is 32 bytes, not \(encoded.count)" }
        var y = encoded
        y[31] &= 0x7F
        // y ≥ p = 2^255 − 19: 0x7F, then thirty 0xFF, then a first byte of 0xED or more.
        if y[31] == 0x7F, y[1...30].allSatisfy({ $0 == 0xFF }), y[0] >= 0xED {
            return "an Ed25519 public key must be canonical (y < 2^255 - 19; RFC 8032 §5.1.3)"
        }
        if smallOrderY.contains(y) {
            return "an Ed25519 public key of small order (a point anyone can sign for) is refused"
        }
        return nil
    }
}
