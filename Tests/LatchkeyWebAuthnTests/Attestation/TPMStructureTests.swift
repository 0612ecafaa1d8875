import Foundation
import LatchkeyCrypto
import LatchkeyWebAuthn
import Testing

/// The TPM 2.0 structures of a `tpm` attestation statement (WebAuthn L3 §8.3): `pubArea`
/// (`TPMT_PUBLIC`) and `certInfo` (`TPMS_ATTEST`), written here field by field from TPM
/// 2.0 Library Part 2, then read back, and every hostile variant refused with a typed
/// error: truncated anywhere, trailing bytes, sizes past the end, a name of another key.
@Suite("TPM attestation structures")
struct TPMStructureTests {
    static func be16(_ value: UInt16) -> Data { Data([UInt8(value >> 8), UInt8(value & 0xFF)]) }
    static func be32(_ value: UInt32) -> Data { Data((0..<4).reversed().map { UInt8(value >> (8 * $0) & 0xFF) }) }
    static func be64(_ value: UInt64) -> Data { Data((0..<8).reversed().map { UInt8(value >> (8 * $0) & 0xFF) }) }
    static func sized(_ bytes: Data) -> Data { be16(UInt16(bytes.count)) + bytes }

    /// A signing key's public area as tpm2-openssl makes one: ECC, SHA-256 name,
    /// fixedTPM | fixedParent | sensitiveDataOrigin | userWithAuth | sign, no policy,
    /// NULL symmetric, scheme and KDF, P-256.
    /// `attributes`: sign, userWithAuth, sensitiveDataOrigin, fixedParent, fixedTPM by default.
    static func pubArea(_ key: COSEKey, nameAlg: UInt16 = 0x000B, curve: UInt16 = 0x0003, type: UInt16 = 0x0023, attributes: UInt32 = 0x0004_0072) -> Data {
        let point = key.verifyingKey.spkiDER.suffix(64)
        var bytes = be16(type)
        bytes += be16(nameAlg)
        bytes += be32(attributes)
        bytes += sized(Data())
        for parameter: UInt16 in [0x0010, 0x0010, curve, 0x0010] { bytes += be16(parameter) }
        bytes += sized(Data(point.prefix(32)))
        bytes += sized(Data(point.suffix(32)))
        return bytes
    }

    static func certInfo(name: Data, extraData: Data, magic: UInt32 = 0xFF54_4347, type: UInt16 = 0x8017) -> Data {
        var bytes = be32(magic)
        bytes += be16(type)
        bytes += sized(Data([0x00, 0x0B]) + Data(repeating: 7, count: 32))
        bytes += sized(extraData)
        bytes += be64(123_456)
        bytes += be32(3)
        bytes += be32(1)
        bytes += Data([1])
        bytes += be64(0x2000_0001_0000_0000)
        bytes += sized(name)
        bytes += sized(Data([0x00, 0x0B]) + Data(repeating: 9, count: 32))
        return bytes
    }

    static func key() throws -> COSEKey { try COSEKey(SigningKey.generate(.es256).publicKey) }

    static func code(_ body: () throws -> Void) -> WebAuthnError.Code? {
        do {
            try body()
            return nil
        } catch let error as WebAuthnError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test("pubArea and certInfo read back; the name is nameAlg ‖ SHA-256(pubArea); certInfo checks against authData ‖ clientDataHash")
    func roundTrip() throws {
        let key = try Self.key()
        let area = try TPMTPublic(Self.pubArea(key))
        #expect(area.holds(key))
        #expect(!area.holds(try Self.key()))
        #expect(area.nameAlgorithm == TPMTPublic.Algorithm.sha256 && area.symmetric == TPMTPublic.Algorithm.null && area.scheme == TPMTPublic.Algorithm.null)
        #expect(area.objectAttributes & TPMTPublic.Attribute.fixedTPM != 0 && area.objectAttributes & TPMTPublic.Attribute.sign != 0)
        let name = try area.name
        #expect(name == Data([0x00, 0x0B]) + (try DigestAlgorithm.sha256.hash(Self.pubArea(key))))

        let toBeSigned = Data("authenticator data".utf8) + (try DigestAlgorithm.sha256.hash(Data("client data".utf8)))
        let info = try TPMSAttest(Self.certInfo(name: name, extraData: try DigestAlgorithm.sha256.hash(toBeSigned)))
        #expect(info.certifiedName == name && info.clock == 123_456 && info.resetCount == 3 && info.restartCount == 1 && info.safe)
        #expect(info.firmwareVersion == 0x2000_0001_0000_0000)
        try info.check(certifies: area, toBeSigned: toBeSigned, hash: .sha256)
    }

    @Test("a certInfo naming another key, a flipped pubArea byte, or another registration's extraData is invalidAttestation")
    func mismatches() throws {
        let key = try Self.key()
        let bytes = Self.pubArea(key)
        let area = try TPMTPublic(bytes)
        let toBeSigned = Data("registration".utf8)
        let extra = try DigestAlgorithm.sha256.hash(toBeSigned)

        let other = try TPMTPublic(Self.pubArea(try Self.key()))
        let namesOther = try TPMSAttest(Self.certInfo(name: try other.name, extraData: extra))
        #expect(Self.code { try namesOther.check(certifies: area, toBeSigned: toBeSigned, hash: .sha256) } == .invalidAttestation)

        // One byte of the point flipped: the area still parses, but its name is not the
        // one the TPM certified, and it no longer holds the credential key.
        var flipped = bytes
        flipped[flipped.count - 1] ^= 0x01
        let changed = try TPMTPublic(flipped)
        #expect(!changed.holds(key))
        let certified = try TPMSAttest(Self.certInfo(name: try area.name, extraData: extra))
        #expect(Self.code { try certified.check(certifies: changed, toBeSigned: toBeSigned, hash: .sha256) } == .invalidAttestation)

        #expect(Self.code { try certified.check(certifies: area, toBeSigned: Data("another registration".utf8), hash: .sha256) } == .invalidAttestation)
        try certified.check(certifies: area, toBeSigned: toBeSigned, hash: .sha256)
    }

    @Test("certInfo the TPM did not generate (magic) or that is not a certification (type) is refused")
    func magicAndType() throws {
        let name = Data([0x00, 0x0B]) + Data(repeating: 1, count: 32)
        #expect(Self.code { _ = try TPMSAttest(Self.certInfo(name: name, extraData: Data(), magic: 0x4C41_5443)) } == .invalidAttestation)
        #expect(Self.code { _ = try TPMSAttest(Self.certInfo(name: name, extraData: Data(), type: 0x8018)) } == .invalidAttestation)
    }

    @Test("every truncation and any trailing byte of either structure is malformedTPMStructure; sizes past the end are caught")
    func truncatedAndTrailing() throws {
        let key = try Self.key()
        let area = Self.pubArea(key)
        let info = Self.certInfo(name: Data([0x00, 0x0B]) + Data(repeating: 1, count: 32), extraData: Data(repeating: 2, count: 32))
        for length in 0..<area.count {
            let code = Self.code { _ = try TPMTPublic(area.prefix(length)) }
            #expect(code == .malformedTPMStructure, "pubArea cut at \(length): \(String(describing: code))")
        }
        for length in 0..<info.count {
            let code = Self.code { _ = try TPMSAttest(info.prefix(length)) }
            // The first six bytes are magic and type, whose truncation is also malformed.
            #expect(code == .malformedTPMStructure, "certInfo cut at \(length): \(String(describing: code))")
        }
        #expect(Self.code { _ = try TPMTPublic(area + Data([0])) } == .malformedTPMStructure)
        #expect(Self.code { _ = try TPMSAttest(info + Data([0])) } == .malformedTPMStructure)
        // extraData claiming 0xFFFF bytes.
        var oversized = info
        oversized[6 + 2 + 34] = 0xFF
        oversized[6 + 2 + 34 + 1] = 0xFF
        #expect(Self.code { _ = try TPMSAttest(oversized) } == .malformedTPMStructure)
        #expect(Self.code { _ = try TPMTPublic(Data(repeating: 0, count: 4096)) } == .malformedTPMStructure)
        // A slice not starting at index 0 reads the same.
        let padded = Data([0xAA, 0xBB]) + area
        #expect(try TPMTPublic(padded.dropFirst(2)).holds(key))
    }

    @Test("an RSA key, another curve, or a SHA-1 name is unsupportedAlgorithm")
    func unsupported() throws {
        let key = try Self.key()
        #expect(Self.code { _ = try TPMTPublic(Self.pubArea(key, type: 0x0001)) } == .unsupportedAlgorithm)
        #expect(Self.code { _ = try TPMTPublic(Self.pubArea(key, curve: 0x0004)) } == .unsupportedAlgorithm)
        #expect(Self.code { _ = try TPMTPublic(Self.pubArea(key, nameAlg: 0x0004)) } == .unsupportedAlgorithm)
    }
}
