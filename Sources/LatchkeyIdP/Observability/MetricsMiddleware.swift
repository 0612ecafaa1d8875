import Foundation
import Hummingbird

/// Records every answer's latency and status by route template (`/v1/authenticate/{session}`,
/// never the path a client sent, so labels stay few) in ``ProviderMetrics``.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = ProviderRequestContext
    let metrics: ProviderMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let clock = ContinuousClock()
        let start = clock.now
        let response = try await next(request, context)
        metrics.answered(endpoint: context.endpointPath ?? "unmatched", status: Int(response.status.code), after: clock.now - start)
        if response.status == .tooManyRequests {
            metrics.rateLimited(context.endpointPath ?? "unmatched")
        }
        return response
    }
}
