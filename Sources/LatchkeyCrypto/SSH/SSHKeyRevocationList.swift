#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An OpenSSH key revocation list (`PROTOCOL.krl`), as `sshd`'s `RevokedKeys` and
/// `ssh-keygen -Q` read it: certificates revoked by serial under the CA that issued
/// them, and plain keys revoked outright. Serials that run on are written as one range.
/// KRL signatures are not written: OpenSSH 9.4 and later refuse a KRL that has one.
public struct SSHKeyRevocationList: Sendable {
    /// Increases with every change, so a host can tell a newer list from an older one.
    public var version: UInt64
    /// Seconds since 1970.
    public var generatedAt: UInt64
    public var comment: String
    /// Revoked certificate serials, by the CA that issued them.
    public var revokedSerials: [SSHPublicKey: Set<UInt64>]
    /// Plain keys revoked, whatever certifies them.
    public var revokedKeys: Set<SSHPublicKey>

    public init(
        version: UInt64, generatedAt: UInt64, comment: String = "", revokedSerials: [SSHPublicKey: Set<UInt64>] = [:],
        revokedKeys: Set<SSHPublicKey> = []
    ) {
        self.version = version
        self.generatedAt = generatedAt
        self.comment = comment
        self.revokedSerials = revokedSerials
        self.revokedKeys = revokedKeys
    }

    static let magic = Data("SSHKRL\n\0".utf8)
    static let formatVersion: UInt32 = 1

    enum Section: UInt8 {
        case certificates = 1
        case explicitKey = 2
    }

    enum CertificateSection: UInt8 {
        case serialList = 0x20
        case serialRange = 0x21
    }

    /// The list in its binary form, sections in a fixed order (CAs and keys by their
    /// blobs, serials ascending), so the same list always gives the same bytes.
    public var wireBlob: Data {
        var writer = SSHWireWriter()
        writer.append(Self.magic)
        writer.uint32(Self.formatVersion)
        writer.uint64(version)
        writer.uint64(generatedAt)
        writer.uint64(0)  // flags
        writer.string(Data())  // reserved
        writer.string(comment)
        for authority in revokedSerials.keys.sorted(by: { $0.wireBlob.lexicographicallyPrecedes($1.wireBlob) }) {
            let serials = (revokedSerials[authority] ?? []).filter { $0 != 0 }.sorted()
            guard !serials.isEmpty else { continue }
            writer.byte(Section.certificates.rawValue)
            writer.nested { section in
                section.string(authority.wireBlob)
                section.string(Data())  // reserved
                var single: [UInt64] = []
                for run in Self.runs(serials) {
                    if run.lowerBound == run.upperBound {
                        single.append(run.lowerBound)
                    } else {
                        section.byte(CertificateSection.serialRange.rawValue)
                        section.nested { range in
                            range.uint64(run.lowerBound)
                            range.uint64(run.upperBound)
                        }
                    }
                }
                if !single.isEmpty {
                    section.byte(CertificateSection.serialList.rawValue)
                    section.nested { list in single.forEach { list.uint64($0) } }
                }
            }
        }
        if !revokedKeys.isEmpty {
            writer.byte(Section.explicitKey.rawValue)
            writer.nested { section in
                for key in revokedKeys.sorted(by: { $0.wireBlob.lexicographicallyPrecedes($1.wireBlob) }) {
                    section.string(key.wireBlob)
                }
            }
        }
        return writer.bytes
    }

    /// Ascending serials as closed ranges of consecutive values.
    static func runs(_ serials: [UInt64]) -> [ClosedRange<UInt64>] {
        var runs: [ClosedRange<UInt64>] = []
        for serial in serials {
            if let last = runs.last, last.upperBound != .max, serial == last.upperBound + 1 {
                runs[runs.count - 1] = last.lowerBound...serial
            } else if runs.last?.contains(serial) != true {
                runs.append(serial...serial)
            }
        }
        return runs
    }
}
