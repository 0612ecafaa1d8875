#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An OpenSSH certificate (`PROTOCOL.certkeys`): a user or host key, signed by a CA key
/// with a serial, a key id, the principals it may act as, a validity window, critical
/// options and extensions. Latchkey's provider issues them for `ecdsa-sha2-nistp256` and
/// `ssh-ed25519` keys; `sshd` trusts the CA (`TrustedUserCAKeys`), `ssh` a host's
/// (`@cert-authority`).
///
/// A parsed certificate keeps the bytes it was read from, so what is checked is what was
/// sent. Parsing does not verify the signature: ask ``isSignatureValid``.
public struct SSHCertificate: Hashable, Sendable {
    /// `SSH_CERT_TYPE_USER` and `SSH_CERT_TYPE_HOST`.
    public enum Kind: UInt32, Hashable, Sendable {
        case user = 1
        case host = 2
    }

    /// A critical option or extension: a name and, for options that take one, a value
    /// (`force-command`'s command); extensions such as `permit-pty` are flags, `nil`.
    public struct Option: Hashable, Sendable {
        public var name: String
        public var value: String?

        public init(_ name: String, _ value: String? = nil) {
            self.name = name
            self.value = value
        }
    }

    /// The extensions `ssh-keygen -s` gives a user certificate by default.
    public static let standardUserExtensions = [
        "permit-X11-forwarding", "permit-agent-forwarding", "permit-port-forwarding", "permit-pty", "permit-user-rc",
    ].map { Option($0) }

    /// Bounds on what is read: a certificate is at most 16 KiB, with at most 256
    /// principals of at most 256 bytes each and 64 options.
    public static let maximumBlobLength = 16 * 1024
    public static let maximumPrincipals = 256
    public static let maximumPrincipalLength = 256
    public static let maximumOptions = 64

    public let nonce: Data
    public let publicKey: SSHPublicKey
    public let serial: UInt64
    public let kind: Kind
    public let keyID: String
    /// Empty means any principal to OpenSSH; Latchkey never issues such a certificate.
    public let principals: [String]
    /// Seconds since 1970, inclusive.
    public let validAfter: UInt64
    /// Seconds since 1970, exclusive.
    public let validBefore: UInt64
    public let criticalOptions: [Option]
    public let extensions: [Option]
    /// The CA's key.
    public let signatureKey: SSHPublicKey
    public let signature: SSHSignature
    /// The certificate's wire blob.
    public let wireBlob: Data
    /// The part the signature covers: everything before it.
    let signedPart: Data

    /// The certificate type name, as on the wire and first on its line.
    public var certificateType: String { publicKey.algorithm.certificateType }

    /// Signs a certificate for `publicKey` with the CA key `authority` (P-256 or
    /// Ed25519). Options and extensions are written sorted by name, as OpenSSH requires.
    /// A principal that is empty, or holds a comma, a control character or a space, is
    /// refused (``isAcceptablePrincipal(_:)``), as is an empty list.
    public static func issue(
        for publicKey: SSHPublicKey, serial: UInt64, kind: Kind, keyID: String, principals: [String], validAfter: UInt64, validBefore: UInt64,
        criticalOptions: [Option] = [], extensions: [Option] = [], by authority: SigningKey
    ) throws -> SSHCertificate {
        guard !principals.isEmpty, principals.count <= maximumPrincipals, principals.allSatisfy(isAcceptablePrincipal) else {
            throw CryptoError.invalidParameter(reason: "a certificate names 1 to \(maximumPrincipals) principals, each without commas, spaces or control characters")
        }
        guard kind != .host || principals.allSatisfy(isAcceptableHostPrincipal) else {
            throw CryptoError.invalidParameter(reason: "a host certificate names hosts, not patterns: no *, ? or !")
        }
        guard validAfter < validBefore else { throw CryptoError.invalidParameter(reason: "a certificate's validity ends after it begins") }
        let signatureKey = try SSHPublicKey(authority.publicKey)
        let nonce = try SecureRandom.bytes(count: 32)
        let signedPart = encodeSignedPart(
            nonce: nonce, publicKey: publicKey, serial: serial, kind: kind, keyID: keyID, principals: principals, validAfter: validAfter,
            validBefore: validBefore, criticalOptions: sorted(criticalOptions), extensions: sorted(extensions), signatureKey: signatureKey
        )
        let signature = try SSHSignature.sign(signedPart, with: authority)
        var writer = SSHWireWriter()
        writer.string(signature.wireBlob)
        return try SSHCertificate(wireBlob: signedPart + writer.bytes)
    }

    /// Whether OpenSSH would match `principal` as written and no list syntax could split
    /// it: printable, no space, comma, quote or backslash, at most
    /// ``maximumPrincipalLength`` bytes.
    public static func isAcceptablePrincipal(_ principal: String) -> Bool {
        !principal.isEmpty && principal.utf8.count <= maximumPrincipalLength && principal.unicodeScalars.allSatisfy { scalar in
            scalar.value > 0x20 && scalar.value != 0x7F && !",\"'\\".unicodeScalars.contains(scalar) && !(0x80...0x9F).contains(scalar.value)
        }
    }

    /// Whether a host certificate may name `principal`: an acceptable principal without
    /// the pattern characters of `ssh_config` and `known_hosts` (`*`, `?`, `!`). OpenSSH
    /// 9.2 compares a host certificate's principals with the name it reached literally,
    /// but other clients (and older or later OpenSSH, which match some fields as patterns)
    /// may read `*.example.com` as every host under it, so no such name is ever signed.
    public static func isAcceptableHostPrincipal(_ principal: String) -> Bool {
        isAcceptablePrincipal(principal) && !principal.contains(where: { "*?!".contains($0) })
    }

    private static func sorted(_ options: [Option]) -> [Option] {
        options.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
    }

    private static func encodeSignedPart(
        nonce: Data, publicKey: SSHPublicKey, serial: UInt64, kind: Kind, keyID: String, principals: [String], validAfter: UInt64,
        validBefore: UInt64, criticalOptions: [Option], extensions: [Option], signatureKey: SSHPublicKey
    ) -> Data {
        var writer = SSHWireWriter()
        writer.string(publicKey.algorithm.certificateType)
        writer.string(nonce)
        // The key's own fields: its blob without the leading type name.
        var key = SSHWireReader(publicKey.wireBlob)
        _ = try? key.text(maximumLength: 64)
        writer.append(publicKey.wireBlob.suffix(key.remaining))
        writer.uint64(serial)
        writer.uint32(kind.rawValue)
        writer.string(keyID)
        writer.nested { list in principals.forEach { list.string($0) } }
        writer.uint64(validAfter)
        writer.uint64(validBefore)
        for options in [criticalOptions, extensions] {
            writer.nested { list in
                for option in options {
                    list.string(option.name)
                    list.nested { data in if let value = option.value { data.string(value) } }
                }
            }
        }
        writer.string(Data())  // reserved
        writer.string(signatureKey.wireBlob)
        return writer.bytes
    }

    /// Parses a certificate of one of the two key types, strictly and within the bounds
    /// above. The signature is parsed, not verified.
    public init(wireBlob blob: Data) throws {
        guard blob.count <= Self.maximumBlobLength else {
            throw CryptoError.invalidEncoding(reason: "an SSH certificate of \(blob.count) bytes, more than \(Self.maximumBlobLength)")
        }
        var reader = SSHWireReader(blob, subject: "SSH certificate")
        let type = try reader.text(maximumLength: 64, "certificate type")
        guard let algorithm = SSHPublicKey.Algorithm.allCases.first(where: { $0.certificateType == type }) else {
            throw CryptoError.unsupportedAlgorithm(reason: "SSH certificate type \(type.quotedForError) is not supported")
        }
        nonce = try reader.string(maximumLength: 64, "nonce")
        guard nonce.count >= 16 else { throw reader.malformed("a nonce shorter than 16 bytes") }
        var key = SSHWireWriter()
        key.string(algorithm.rawValue)
        switch algorithm {
        case .ecdsaP256:
            key.string(try reader.string(maximumLength: 16, "curve"))
            key.string(try reader.string(maximumLength: 65, "point"))
        case .ed25519:
            key.string(try reader.string(maximumLength: 32, "key"))
        }
        publicKey = try SSHPublicKey(wireBlob: key.bytes)
        serial = try reader.uint64()
        guard let kind = Kind(rawValue: try reader.uint32()) else { throw reader.malformed("a certificate neither for a user nor a host") }
        self.kind = kind
        keyID = try reader.text(maximumLength: 1024, "key id")
        var list = try reader.nested(maximumLength: Self.maximumPrincipals * (Self.maximumPrincipalLength + 4), "principals")
        var principals: [String] = []
        while !list.isAtEnd {
            guard principals.count < Self.maximumPrincipals else { throw reader.malformed("more than \(Self.maximumPrincipals) principals") }
            principals.append(try list.text(maximumLength: Self.maximumPrincipalLength, "principal"))
        }
        self.principals = principals
        validAfter = try reader.uint64()
        validBefore = try reader.uint64()
        criticalOptions = try Self.options(&reader, "critical options")
        extensions = try Self.options(&reader, "extensions")
        _ = try reader.string(maximumLength: 1024, "reserved")
        signatureKey = try SSHPublicKey(wireBlob: try reader.string(maximumLength: SSHPublicKey.maximumBlobLength, "signature key"))
        signedPart = blob.prefix(blob.count - reader.remaining)
        signature = try SSHSignature(wireBlob: try reader.string(maximumLength: SSHSignature.maximumBlobLength, "signature"))
        try reader.expectEnd()
        wireBlob = blob
    }

    private static func options(_ reader: inout SSHWireReader, _ what: String) throws -> [Option] {
        var list = try reader.nested(maximumLength: 8192, what)
        var options: [Option] = []
        while !list.isAtEnd {
            guard options.count < maximumOptions else { throw list.malformed("more than \(maximumOptions) \(what)") }
            let name = try list.text(maximumLength: 256, "option name")
            if let previous = options.last, !Array(previous.name.utf8).lexicographicallyPrecedes(Array(name.utf8)) {
                throw list.malformed("\(what) not sorted by name, or named twice")
            }
            var data = try list.nested(maximumLength: 4096, "option data")
            if data.isAtEnd {
                options.append(Option(name))
            } else {
                options.append(Option(name, try data.text(maximumLength: 4096, "option value")))
                try data.expectEnd()
            }
        }
        return options
    }

    /// Parses a certificate line, `<certificate type> <base64> [comment]` (a
    /// `-cert.pub` file).
    public init(openSSHLine line: String) throws {
        guard line.utf8.count <= Self.maximumBlobLength * 2 else { throw CryptoError.invalidEncoding(reason: "an SSH certificate line that is too long") }
        let fields = line.trimmingWhitespace().split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard fields.count >= 2, let blob = Data(base64Encoded: String(fields[1])) else {
            throw CryptoError.invalidEncoding(reason: "an SSH certificate line is `<type> <base64> [comment]`")
        }
        try self.init(wireBlob: blob)
        guard fields[0] == certificateType else {
            throw CryptoError.invalidEncoding(reason: "an SSH certificate line names \(String(fields[0]).quotedForError) but holds \(certificateType)")
        }
    }

    /// The certificate as one line, as in a `-cert.pub` file.
    public func openSSHLine(comment: String? = nil) -> String {
        let line = certificateType + " " + wireBlob.base64EncodedString()
        return comment.map { line + " " + $0 } ?? line
    }

    /// Whether the CA key in the certificate signed it.
    public var isSignatureValid: Bool {
        signature.isValid(for: signedPart, by: signatureKey)
    }

    /// Whether `date` lies in the validity window.
    public func isValid(at date: Date) -> Bool {
        let seconds = date.timeIntervalSince1970
        return seconds >= 0 && UInt64(seconds) >= validAfter && UInt64(seconds) < validBefore
    }

    public static func == (lhs: SSHCertificate, rhs: SSHCertificate) -> Bool {
        lhs.wireBlob == rhs.wireBlob
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(wireBlob)
    }
}
