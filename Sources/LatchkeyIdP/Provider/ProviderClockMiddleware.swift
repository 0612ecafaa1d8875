import Hummingbird

/// Binds the provider's clock (``ProviderConfiguration/clock``) to the request's task, so
/// everything the request decides reads the same clock. Added only for a clock other than
/// the host's, which is what an unbound task reads anyway.
struct ProviderClockMiddleware: RouterMiddleware {
    typealias Context = ProviderRequestContext
    let clock: ProviderClock

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await clock.bound { try await next(request, context) }
    }
}
