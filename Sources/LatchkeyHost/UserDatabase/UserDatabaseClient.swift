#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Asks the host daemon's user database socket for one account, as nss-systemd would,
/// but only this service's socket: `latchkey host principals` and the PAM helper must
/// know whether an account is the directory's, not whether some other source has it.
public enum UserDatabaseClient {
    /// A directory account as the daemon serves it now.
    public struct Account: Decodable, Hashable, Sendable {
        public var userName: String
        public var uid: Int64
        public var gid: Int64
        public var homeDirectory: String
        public var shell: String
        public var service: String
    }

    private struct UserReply: Decodable {
        var record: Account
    }

    private struct Query: Encodable {
        var userName: String
        var service: String
    }

    /// The account `name` served on `socket` (the service is the socket's file name), or
    /// nil when the daemon serves no such account. Throws when the daemon cannot be asked.
    public static func account(named name: String, socket: String, timeout: Duration = .seconds(5)) throws -> Account? {
        let service = URL(fileURLWithPath: socket).lastPathComponent
        let client = try VarlinkClient(path: socket, timeout: timeout)
        let replies = try client.call("\(UserDatabaseService.interface).GetUserRecord", parameters: Query(userName: name, service: service))
        switch replies.first {
        case .success(let frame)?:
            let account = try VarlinkClient.decode(UserReply.self, from: frame).record
            guard account.userName == name, account.service == service else { throw HostError(.varlink, "the daemon answered another account than asked") }
            return account
        case .failure(let failure)? where failure.name == UserDatabaseService.noRecordFound:
            return nil
        case .failure(let failure)?:
            throw HostError(.varlink, "the daemon answered \(failure.name)")
        case nil:
            throw HostError(.varlink, "the daemon did not answer")
        }
    }
}
