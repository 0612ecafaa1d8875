import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

/// Ed25519 keys anyone can sign for are refused at every door a key comes in by (the
/// red team had the SSH CA certify the identity point, then `ssh-keygen -Y verify` took a
/// signature nobody made): raw bytes, SubjectPublicKeyInfo, a JWK, an SSH key.
@Suite("Ed25519: small-order and non-canonical public keys")
struct Ed25519SmallOrderTests {
    /// The `y` of the eight small-order points (RFC 8032 §5.1: 0, 1, p − 1 and the two
    /// order-8 values), each with both signs of `x`, and `y` ≥ p written out (p, p + 1,
    /// 2^255 − 1), which decodes to a point already named.
    static func refused() throws -> [[UInt8]] {
        let small: [[UInt8]] = [
            [UInt8](repeating: 0, count: 32),
            [1] + [UInt8](repeating: 0, count: 31),
            [0xEC] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],
            Array(try Data(hex: "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05")),
            Array(try Data(hex: "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")),
            [0xED] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],
            [0xEE] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],
            [UInt8](repeating: 0xFF, count: 31) + [0x7F],
        ]
        return small + small.map { var signed = $0; signed[31] |= 0x80; return signed }
    }

    static let spkiPrefix: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]

    @Test("each is refused as raw bytes, as SubjectPublicKeyInfo, as an OKP JWK and as an ssh-ed25519 key; a real key is not")
    func everyDoor() throws {
        for raw in try Self.refused() {
            let hex = raw.map { String(format: "%02x", $0) }.joined()
            #expect(throws: CryptoError.self, "raw \(hex)") { try VerifyingKey(ed25519RawRepresentation: raw) }
            #expect(throws: CryptoError.self, "SPKI \(hex)") { try VerifyingKey(spkiDER: Self.spkiPrefix + raw) }
            #expect(throws: CryptoError.self, "JWK \(hex)") { try VerifyingKey(jwk: JSONWebKey(kty: "OKP", crv: "Ed25519", x: Base64URL.encode(Data(raw)))) }
            var blob = SSHWireWriterForTests()
            blob.string(Data("ssh-ed25519".utf8))
            blob.string(Data(raw))
            #expect(throws: (any Error).self, "SSH \(hex)") { try SSHPublicKey(wireBlob: blob.bytes) }
        }
        let real = try SigningKey.generate(.ed25519).publicKey
        #expect(throws: Never.self) { try VerifyingKey(spkiDER: real.spkiDER) }
        #expect(throws: Never.self) { try VerifyingKey(ed25519RawRepresentation: real.spkiDER.suffix(32)) }
    }
}

/// SSH's string encoding (RFC 4251 §5): a 32-bit big-endian length, then the bytes.
struct SSHWireWriterForTests {
    var bytes = Data()

    mutating func string(_ value: Data) {
        let count = UInt32(value.count)
        bytes.append(contentsOf: [UInt8(count >> 24), UInt8((count >> 16) & 0xFF), UInt8((count >> 8) & 0xFF), UInt8(count & 0xFF)])
        bytes.append(value)
    }
}
