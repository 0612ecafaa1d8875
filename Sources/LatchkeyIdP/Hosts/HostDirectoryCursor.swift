/// Where the next page of a host's directory walk starts (docs/PROTOCOL.md section 14),
/// and the directory version the walk is of: `V.aU` (accounts after `uid` U) or
/// `V.gG.U` (groups from `gid` G, that group's members after `uid` U; -1 for none yet).
///
/// Not sealed: a cursor only says where to go on within the host's own view, which is
/// computed from its policy on every page, so an altered cursor shows the host nothing it
/// could not read anyway. It is parsed strictly and bounded.
enum HostDirectoryCursor: Equatable, Sendable {
    case accounts(version: Int64, afterUID: Int64)
    case groups(version: Int64, fromGID: Int64, afterMember: Int64)

    static let maximumLength = 64

    var version: Int64 {
        switch self {
        case .accounts(let version, _), .groups(let version, _, _): version
        }
    }

    var text: String {
        switch self {
        case .accounts(let version, let uid): "\(version).a\(uid)"
        case .groups(let version, let gid, let member): "\(version).g\(gid).\(member)"
        }
    }

    init?(_ text: String) {
        guard text.utf8.count <= Self.maximumLength, text.utf8.allSatisfy({ (0x2D...0x39).contains($0) || $0 == UInt8(ascii: "a") || $0 == UInt8(ascii: "g") }) else {
            return nil
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, let version = Int64(parts[0]), version > 0 else { return nil }
        if parts.count == 2, parts[1].first == "a", let uid = Int64(parts[1].dropFirst()), uid >= -1 {
            self = .accounts(version: version, afterUID: uid)
        } else if parts.count == 3, parts[1].first == "g", let gid = Int64(parts[1].dropFirst()), gid >= 0, let member = Int64(parts[2]), member >= -1 {
            self = .groups(version: version, fromGID: gid, afterMember: member)
        } else {
            return nil
        }
    }
}
