#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `io.latchkey.Host`, the daemon's own varlink interface on its control socket (root's
/// alone: mode 0600, and the peer's uid checked): `Status` answers ``HostStatus``, `Sync`
/// syncs now and answers the status after.
public enum HostControl {
    static let interface = "io.latchkey.Host"
    static let status = "\(interface).Status"
    static let sync = "\(interface).Sync"

    private struct Empty: Encodable {}

    private struct StatusReply: Decodable {
        var status: HostStatus
    }

    /// The daemon's status, asked on `socket`.
    public static func status(socket: String) throws -> HostStatus {
        try ask(status, socket: socket, timeout: .seconds(5))
    }

    /// Syncs now and answers the status after (waits up to two minutes).
    public static func syncNow(socket: String) throws -> HostStatus {
        try ask(sync, socket: socket, timeout: .seconds(130))
    }

    private static func ask(_ method: String, socket: String, timeout: Duration) throws -> HostStatus {
        let client = try VarlinkClient(path: socket, timeout: timeout)
        guard let reply = try client.call(method, parameters: Empty()).first else { throw HostError(.varlink, "the daemon did not answer") }
        switch reply {
        case .success(let frame):
            let decoder = HostStatus.decoder()
            struct Envelope: Decodable { var parameters: StatusReply }
            return try decoder.decode(Envelope.self, from: frame).parameters.status
        case .failure(let failure):
            throw HostError(.varlink, "the daemon answered \(failure.name)")
        }
    }
}
