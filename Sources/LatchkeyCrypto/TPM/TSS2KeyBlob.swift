#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A TPM-wrapped key in the "TSS2 PRIVATE KEY" form tpm2-openssl writes (the TPMKey ASN.1
/// of the OpenSSL TPM 2.0 key file format, as in tpm2-tss-engine and the Linux kernel):
/// the key's `TPM2B_PUBLIC` and `TPM2B_PRIVATE`, marshalled, under a parent.
///
/// Read here so that the TPM commands tpm2-openssl does not offer (``TPM`` attestation,
/// over ESAPI) can load the same key: only keys under the storage primary that
/// tpm2-openssl derives from the owner hierarchy (parent `TPM_RH_OWNER`, 0x40000001) are
/// accepted, which is what it makes.
struct TSS2KeyBlob: Sendable, Hashable {
    /// `TPM2B_PUBLIC`, with its size prefix.
    let publicArea: Data
    /// `TPM2B_PRIVATE`, with its size prefix: the TPM-encrypted private part.
    let privateArea: Data

    /// The public area without its size prefix (`TPMT_PUBLIC`): what WebAuthn's `pubArea`
    /// holds and the key's name is a hash of.
    var publicAreaContents: Data { publicArea.dropFirst(2) }

    static let loadableKeyOID: [UInt8] = [0x67, 0x81, 0x05, 0x0A, 0x01, 0x03] // 2.23.133.10.1.3
    static let ownerHierarchy: UInt32 = 0x4000_0001

    init(publicArea: Data, privateArea: Data) {
        self.publicArea = publicArea
        self.privateArea = privateArea
    }

    /// The same PEM form tpm2-openssl writes, for a key made through ESAPI (an attestation
    /// key) that the vault keeps like any other TPM key: `emptyAuth` TRUE, parent the
    /// owner hierarchy.
    var pem: Data {
        func element(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
            let count = contents.count
            let length: [UInt8] = count < 0x80 ? [UInt8(count)]
                : count < 0x100 ? [0x81, UInt8(count)] : [0x82, UInt8(count >> 8), UInt8(count & 0xFF)]
            return [tag] + length + contents
        }
        let parent = withUnsafeBytes(of: Self.ownerHierarchy.bigEndian, Array.init)
        let der = element(0x30,
            element(0x06, Self.loadableKeyOID) + element(0xA0, element(0x01, [0xFF])) + element(0x02, parent)
                + element(0x04, Array(publicArea)) + element(0x04, Array(privateArea))
        )
        return Data(PEMDocument(label: "TSS2 PRIVATE KEY", der: Data(der)).pemString.utf8)
    }

    /// Parses the PEM blob tpm2-openssl wrote (``TPMSigningKey/wrappedKey``).
    init(pem: Data) throws {
        guard pem.count <= PEMDocument.maximumTextSize else {
            throw CryptoError.invalidEncoding(reason: "a TPM key blob is at most \(PEMDocument.maximumTextSize) bytes")
        }
        let document = try PEMDocument(parsing: String(decoding: pem, as: UTF8.self), expectedLabel: "TSS2 PRIVATE KEY")
        var outer = DERReader(Array(document.der), subject: .tpmKeyBlob)
        var key = DERReader(try outer.element(tag: 0x30), subject: .tpmKeyBlob)
        guard outer.isAtEnd else { throw outer.malformed("bytes after the key") }
        guard Array(try key.element(tag: 0x06)) == Self.loadableKeyOID else {
            throw key.malformed("not a loadable key (OID 2.23.133.10.1.3)")
        }
        if key.nextTag == 0xA0 { _ = try key.element(tag: 0xA0) } // emptyAuth [0] EXPLICIT BOOLEAN
        let parent = try key.unsignedInteger(maximumByteCount: 4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard parent == Self.ownerHierarchy else {
            throw CryptoError.tpmKeyUnusable(reason: "the TPM key's parent is 0x\(HexadecimalText.padded(parent, digits: 8)); only keys under the owner hierarchy's storage primary (0x40000001) can be attested")
        }
        let publicArea = Data(try key.element(tag: 0x04))
        let privateArea = Data(try key.element(tag: 0x04))
        guard key.isAtEnd else { throw key.malformed("unexpected fields after the private part") }
        for (name, area) in [("public", publicArea), ("private", privateArea)] {
            guard area.count >= 2, Int(area[area.startIndex]) << 8 | Int(area[area.startIndex + 1]) == area.count - 2 else {
                throw key.malformed("the \(name) area's size prefix does not match its length")
            }
        }
        self.init(publicArea: publicArea, privateArea: privateArea)
    }
}
