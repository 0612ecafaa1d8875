#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyOAuth
import LatchkeyProtocol

/// One read of the provider's directory by a host (docs/PROTOCOL.md section 14): the
/// host's client credentials tokens (scope `host`, DPoP-bound, from its client key), the
/// first page asked with `If-None-Match` of the version the host has, then every `next`
/// until the last. A page of another version, or `409 directory_changed`, starts the walk
/// again (at most ``maximumRestarts`` times), so the host never puts together a
/// directory that never was.
///
/// Everything the provider answers is bounded: a page by the transport's 1 MiB, the walk
/// by ``maximumPages`` and ``maximumEntries``. The pages must come in the order the
/// protocol promises (accounts by `uid`, groups by `gid`); anything else fails the read,
/// and the host keeps the directory it had.
struct HostDirectoryWalk: Sendable {
    let embedded: Embedded
    let issuer: URL
    let clientID: String

    static let maximumRestarts = 5
    static let maximumPages = 2_000
    /// Accounts, groups and memberships together: ten times a large fleet.
    static let maximumEntries = 2_000_000

    enum Outcome: Sendable {
        /// The provider's version is still `known`.
        case unchanged
        case changed(HostDirectory)
    }

    /// Reads the directory; `known` is the version the host has (nil for none).
    func read(known: String?) async throws -> Outcome {
        var rejected: Tokens?
        var restarts = 0
        while true {
            let tokens = try await embedded.clientCredentials(
                issuer: issuer, clientID: clientID, scopes: [HostDirectoryPage.scope], dpop: true, rejected: rejected
            )
            do {
                return try await walk(tokens: tokens, known: known)
            } catch WalkInterruption.tokenRejected where rejected == nil {
                rejected = tokens
            } catch WalkInterruption.changed where restarts < Self.maximumRestarts {
                restarts += 1
            } catch WalkInterruption.changed {
                throw HostError(.provider, "the directory changed during \(Self.maximumRestarts + 1) reads in a row; trying again later")
            } catch WalkInterruption.tokenRejected {
                throw HostError(.provider, "the provider refused this host's new token too; is the client registered with --scope host?")
            }
        }
    }

    private enum WalkInterruption: Error {
        case changed
        case tokenRejected
    }

    private func walk(tokens: Tokens, known: String?) async throws -> Outcome {
        let transport = embedded.transport(for: tokens)
        var cursor: String?
        var version: String?
        var accounts: [HostDirectoryPage.Account] = []
        var groups: [HostDirectoryPage.Group] = []
        var entries = 0
        for _ in 0..<Self.maximumPages {
            var components = URLComponents(url: issuer.appendingPathComponent(ProtocolPath.hostDirectory), resolvingAgainstBaseURL: false)
            components?.queryItems = [URLQueryItem(name: HostDirectoryPage.Query.limit, value: String(HostDirectoryPage.maximumLimit))]
                + (cursor.map { [URLQueryItem(name: HostDirectoryPage.Query.cursor, value: $0)] } ?? [])
            guard let url = components?.url else { throw HostError(.provider, "the issuer URL does not take the directory's path") }
            var headers = ["Accept": ProtocolPath.jsonMediaType]
            if cursor == nil, let known { headers["If-None-Match"] = "\"\(known)\"" }
            let response = try await transport.send(TransportRequest(method: HTTPMethod.get, url: url, headers: headers))
            switch response.status {
            case 200: break
            case 304 where cursor == nil && known != nil: return .unchanged
            case 401: throw WalkInterruption.tokenRejected
            case 409 where (try? JSONDecoder().decode(ErrorResponse.self, from: response.body))?.error == .directoryChanged:
                throw WalkInterruption.changed
            default:
                let answer = try? JSONDecoder().decode(ErrorResponse.self, from: response.body)
                let said = (answer?.errorDescription ?? answer?.error?.rawValue).map { ": \($0.displaySafe(maximumLength: 256))" } ?? ""
                throw HostError(.provider, "the provider answered the directory with HTTP \(response.status)\(said)")
            }
            let page: HostDirectoryPage
            do {
                page = try JSONDecoder().decode(HostDirectoryPage.self, from: response.body)
            } catch {
                throw HostError(.malformedDirectory, "a directory page does not parse", underlying: error)
            }
            guard page.version == (version ?? page.version), !page.version.isEmpty, page.version.utf8.count <= 64 else {
                throw WalkInterruption.changed
            }
            version = page.version
            try append(page, to: &accounts, &groups)
            entries += page.accounts.count + page.groups.reduce(0) { $0 + 1 + $1.members.count }
            guard entries <= Self.maximumEntries else {
                throw HostError(.malformedDirectory, "the directory holds more than \(Self.maximumEntries) entries")
            }
            guard let next = page.next else {
                return .changed(HostDirectory(version: page.version, accounts: accounts, groups: groups))
            }
            guard next != cursor, next.utf8.count <= 256 else { throw HostError(.malformedDirectory, "a directory page's next cursor goes nowhere") }
            cursor = next
        }
        throw HostError(.malformedDirectory, "the directory runs past \(Self.maximumPages) pages")
    }

    /// Adds a page, checking the order the protocol promises: accounts by rising `uid`,
    /// then groups by rising `gid`, a group continued on the next page under its `gid`.
    private func append(_ page: HostDirectoryPage, to accounts: inout [HostDirectoryPage.Account], _ groups: inout [HostDirectoryPage.Group]) throws {
        for account in page.accounts {
            guard groups.isEmpty, account.uid > (accounts.last?.uid ?? .min) else {
                throw HostError(.malformedDirectory, "the directory's accounts are out of order")
            }
            accounts.append(account)
        }
        for group in page.groups {
            if let last = groups.last, last.gid == group.gid {
                guard last.name == group.name, last.sudo == group.sudo else {
                    throw HostError(.malformedDirectory, "a continued group \(group.gid) changed its name or sudo")
                }
                groups[groups.count - 1].members += group.members
            } else {
                guard group.gid > (groups.last?.gid ?? .min) else { throw HostError(.malformedDirectory, "the directory's groups are out of order") }
                groups.append(group)
            }
        }
    }
}
