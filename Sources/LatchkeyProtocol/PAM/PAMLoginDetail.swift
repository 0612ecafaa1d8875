#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyOAuth
public import LatchkeyCrypto

/// What a host asks a person to approve when `pam_latchkey` signs someone in to it
/// (docs/PROTOCOL.md section 13): an authorization detail (RFC 9396 §2) of type
/// `latchkey_pam_login`, sent with the host's device authorization request, which the
/// host authenticates with its client key (`private_key_jwt`), so only an enrolled host
/// can say it. The provider keeps it with the device code and shows it to the approver
/// (the `/device` page, `latchkey approve`): the host (the client's registered name),
/// the service, the user and the remote address.
public struct PAMLoginDetail: Codable, Hashable, Sendable {
    /// The RFC 9396 `type`.
    public static let type = "latchkey_pam_login"
    /// The longest service name (`sshd`, `sudo`, `login`).
    public static let maximumServiceLength = 64
    /// The longest user name, as `pam_latchkey` sends it.
    public static let maximumUserLength = 256
    /// The longest remote host or terminal name.
    public static let maximumHostLength = 256

    public var type: String
    /// `PAM_SERVICE`.
    public var service: String
    /// `PAM_USER`: the account on the host.
    public var user: String
    /// `PAM_RHOST`, when the service names one (sshd does).
    public var remoteHost: String?
    /// `PAM_TTY`, when there is one.
    public var tty: String?

    enum CodingKeys: String, CodingKey {
        case type, service, user
        case remoteHost = "remote_host"
        case tty
    }

    public init(service: String, user: String, remoteHost: String? = nil, tty: String? = nil) {
        type = Self.type
        self.service = service
        self.user = user
        self.remoteHost = remoteHost.flatMap { $0.isEmpty ? nil : $0 }
        self.tty = tty.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Why this detail cannot be taken, or nil: the type, a service and a user present,
    /// every field within its length and free of control characters (a terminal or a
    /// page showing them must never act on them).
    public var problem: String? {
        guard type == Self.type else { return "type must be \(Self.type)" }
        func clean(_ value: String, _ maximum: Int) -> Bool {
            !value.isEmpty && value.utf8.count <= maximum && !value.unicodeScalars.contains { $0.properties.generalCategory == .control }
        }
        guard clean(service, Self.maximumServiceLength) else { return "service must be 1 to \(Self.maximumServiceLength) bytes without control characters" }
        guard clean(user, Self.maximumUserLength) else { return "user must be 1 to \(Self.maximumUserLength) bytes without control characters" }
        if let remoteHost, !clean(remoteHost, Self.maximumHostLength) {
            return "remote_host must be 1 to \(Self.maximumHostLength) bytes without control characters"
        }
        if let tty, !clean(tty, Self.maximumHostLength) { return "tty must be 1 to \(Self.maximumHostLength) bytes without control characters" }
        return nil
    }

    /// The `authorization_details` parameter (RFC 9396 §2): a JSON array holding this one.
    public func parameter() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode([self]), as: UTF8.self)
    }

    /// The one detail of an `authorization_details` parameter, or why there is none:
    /// at most 4 KiB, a JSON array of exactly one object of this type (RFC 9396 §5:
    /// anything else is `invalid_authorization_details`).
    public static func parse(_ parameter: String) -> Result<PAMLoginDetail, PAMLoginDetailError> {
        guard parameter.utf8.count <= 4096 else { return .failure(.init(code: .tooLarge, reason: "authorization_details is over 4096 bytes")) }
        let details: [PAMLoginDetail]
        do {
            details = try JSONDecoder().decode([PAMLoginDetail].self, from: Data(parameter.utf8))
        } catch {
            return .failure(.init(code: .malformed, reason: "authorization_details must be a JSON array of one \(Self.type) object with service and user", underlying: error))
        }
        guard details.count == 1, let detail = details.first else {
            return .failure(.init(code: .malformed, reason: "authorization_details must hold exactly one \(Self.type) object, not \(details.count)"))
        }
        if let problem = detail.problem { return .failure(.init(code: .invalidDetail, reason: problem)) }
        return .success(detail)
    }
}

/// Why an `authorization_details` parameter was refused (RFC 9396 §5: the provider answers
/// `invalid_authorization_details` with ``reason``), after the template every Latchkey
/// error follows: an open-ended ``code``, the reason, and the decoder's error kept.
public struct PAMLoginDetailError: LatchkeyErrorTemplate, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The parameter is over 4 KiB.
        public static let tooLarge = Code("tooLarge")
        /// Not a JSON array of exactly one object of this type.
        public static let malformed = Code("malformed")
        /// One object, but a field is missing, too long or holds a control character.
        public static let invalidDetail = Code("invalidDetail")
    }

    public let code: Code
    public let reason: String
    public let underlying: (any Error)?
    public let file: String
    public let line: UInt

    public init(code: Code, reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.underlying = underlying
        self.file = file
        self.line = line
    }
}
