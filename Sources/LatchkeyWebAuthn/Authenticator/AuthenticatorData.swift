#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Authenticator data (WebAuthn §6.1): the bytes an authenticator signs, both ways.
///
/// ```
/// rpIdHash (32) | flags (1) | signCount (4, big-endian) | [attestedCredentialData] | [extensions]
/// attestedCredentialData = aaguid (16) | credentialIdLength (2) | credentialId | credentialPublicKey (COSE)
/// ```
///
/// Parsing is strict: the AT and ED flags must match what follows, the credential ID is at
/// most 1023 bytes (§5.8.3), and nothing may be left over.
public struct AuthenticatorData: Hashable, Sendable {
    /// The flags byte (§6.1, table "flags").
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        public static let userPresent = Flags(rawValue: 0x01)
        public static let userVerified = Flags(rawValue: 0x04)
        public static let backupEligible = Flags(rawValue: 0x08)
        public static let backupState = Flags(rawValue: 0x10)
        public static let attestedCredentialData = Flags(rawValue: 0x40)
        public static let extensionData = Flags(rawValue: 0x80)
    }

    /// Attested credential data (§6.5.1).
    public struct AttestedCredentialData: Hashable, Sendable {
        public var aaguid: Data
        public var credentialID: Data
        public var credentialPublicKey: COSEKey

        public init(aaguid: Data, credentialID: Data, credentialPublicKey: COSEKey) {
            self.aaguid = aaguid
            self.credentialID = credentialID
            self.credentialPublicKey = credentialPublicKey
        }
    }

    /// The longest credential ID allowed (§5.8.3).
    public static let maximumCredentialIDLength = 1023

    public let rpIDHash: Data
    public let flags: Flags
    public let signCount: UInt32
    public let attestedCredentialData: AttestedCredentialData?
    public let extensions: CBOR?
    /// The exact bytes, which are what signatures cover.
    public let bytes: Data

    /// Builds authenticator data; the flags' AT and ED bits are set from what is given.
    public init(
        rpIDHash: Data,
        flags: Flags,
        signCount: UInt32,
        attestedCredentialData: AttestedCredentialData? = nil,
        extensions: CBOR? = nil
    ) throws {
        guard rpIDHash.count == 32 else {
            throw WebAuthnError.malformedAuthenticatorData(reason: "rpIdHash must be 32 bytes")
        }
        var flags = flags.subtracting([.attestedCredentialData, .extensionData])
        if attestedCredentialData != nil { flags.insert(.attestedCredentialData) }
        if extensions != nil { flags.insert(.extensionData) }
        var bytes = rpIDHash
        bytes.append(flags.rawValue)
        bytes.append(contentsOf: [UInt8(signCount >> 24), UInt8(signCount >> 16 & 0xFF), UInt8(signCount >> 8 & 0xFF), UInt8(signCount & 0xFF)])
        if let attested = attestedCredentialData {
            guard attested.aaguid.count == 16 else {
                throw WebAuthnError.malformedAuthenticatorData(reason: "AAGUID must be 16 bytes")
            }
            guard attested.credentialID.count <= Self.maximumCredentialIDLength else {
                throw WebAuthnError.credentialIDTooLong(reason: "credential ID over 1023 bytes")
            }
            bytes.append(attested.aaguid)
            bytes.append(contentsOf: [UInt8(attested.credentialID.count >> 8), UInt8(attested.credentialID.count & 0xFF)])
            bytes.append(attested.credentialID)
            bytes.append(attested.credentialPublicKey.encoded)
        }
        if let extensions { bytes.append(extensions.encoded()) }
        self.rpIDHash = rpIDHash
        self.flags = flags
        self.signCount = signCount
        self.attestedCredentialData = attestedCredentialData
        self.extensions = extensions
        self.bytes = bytes
    }

    /// Parses authenticator data.
    public init(bytes data: Data) throws {
        func malformed(_ why: String) -> WebAuthnError {
            WebAuthnError.malformedAuthenticatorData(reason: "authenticator data: \(why)")
        }
        let bytes = Data(data)
        guard bytes.count >= 37 else { throw malformed("\(bytes.count) bytes, at least 37 needed") }
        guard bytes.count <= 64 * 1024 else { throw malformed("over 64 KiB") }
        let base = bytes.startIndex
        rpIDHash = Data(bytes[base..<base + 32])
        flags = Flags(rawValue: bytes[base + 32])
        signCount = bytes[base + 33..<base + 37].reduce(0) { $0 << 8 | UInt32($1) }
        var offset = base + 37
        if flags.contains(.attestedCredentialData) {
            guard bytes.count - (offset - base) >= 18 else { throw malformed("truncated attested credential data") }
            let aaguid = bytes[offset..<offset + 16]
            let length = Int(bytes[offset + 16]) << 8 | Int(bytes[offset + 17])
            offset += 18
            guard length <= Self.maximumCredentialIDLength else {
                throw WebAuthnError.credentialIDTooLong(reason: "credential ID of \(length) bytes (at most 1023)")
            }
            guard bytes.endIndex - offset >= length else { throw malformed("truncated credential ID") }
            let credentialID = bytes[offset..<offset + length]
            offset += length
            let (keyItem, used): (CBOR, Int)
            do {
                (keyItem, used) = try CBOR.decodePrefix(Data(bytes[offset...]))
            } catch {
                throw malformed("credential public key is not CBOR")
            }
            offset += used
            attestedCredentialData = AttestedCredentialData(
                aaguid: Data(aaguid), credentialID: Data(credentialID), credentialPublicKey: try COSEKey(cbor: keyItem)
            )
        } else {
            attestedCredentialData = nil
        }
        if flags.contains(.extensionData) {
            guard offset < bytes.endIndex else { throw malformed("ED set but no extensions") }
            let (item, used): (CBOR, Int)
            do {
                (item, used) = try CBOR.decodePrefix(Data(bytes[offset...]))
            } catch {
                throw malformed("extensions are not CBOR")
            }
            guard item.mapEntries != nil else { throw malformed("extensions are not a map") }
            offset += used
            extensions = item
        } else {
            extensions = nil
        }
        guard offset == bytes.endIndex else { throw malformed("\(bytes.endIndex - offset) bytes left over") }
        self.bytes = bytes
    }
}
