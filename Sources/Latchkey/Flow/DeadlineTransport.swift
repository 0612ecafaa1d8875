#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyOAuth

/// Puts a whole-request deadline on any ``HTTPTransport`` the app supplies: the request is
/// cancelled, and the caller released with `timedOut`, when it outlasts the request
/// deadline or what is left of the flow's (``FlowDeadline``). A provider that sends its
/// headers and then a byte now and then is cut off on time (docs/SECURITY.md, "Links and
/// providers").
///
/// The transport underneath must end a cancelled request promptly, as
/// `HTTP1Transport` does; the caller is released when it has.
struct DeadlineTransport: HTTPTransport {
    let inner: any HTTPTransport
    let requestTimeout: Duration

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let flow = FlowDeadline.current
        let allowed = min(requestTimeout, flow?.left ?? requestTimeout)
        guard allowed > .zero else { throw Self.flowSpent(flow, request) }
        let started = ContinuousClock.now
        defer { flow?.spend(ContinuousClock.now - started) }
        let inner = inner
        return try await withThrowingTaskGroup(of: TransportResponse?.self) { group in
            group.addTask { try await inner.send(request) }
            group.addTask {
                try await Task.sleep(for: allowed)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let response = first else {
                throw allowed < requestTimeout ? Self.flowSpent(flow, request) : OAuthError.timedOut(reason: "request to \(request.url.host ?? "the provider") took longer than \(Self.seconds(requestTimeout))"
                )
            }
            return response
        }
    }

    private static func flowSpent(_ flow: FlowDeadline?, _ request: TransportRequest) -> OAuthError {
        OAuthError.timedOut(reason: "the flow spent its \(seconds(flow?.total ?? .zero)) waiting on providers; the request to \(request.url.host ?? "the provider") was stopped"
        )
    }

    static func seconds(_ duration: Duration) -> String {
        "\(duration.components.seconds) s"
    }
}
