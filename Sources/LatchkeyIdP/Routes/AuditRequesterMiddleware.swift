import Hummingbird

/// Binds the request's ``AuditRequester`` to its task, after the client's address is
/// known (``ClientAddressMiddleware``).
struct AuditRequesterMiddleware: RouterMiddleware {
    typealias Context = ProviderRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let requester = AuditRequester(address: context.clientAddress, userAgent: request.headers[.userAgent])
        return try await AuditRequester.$current.withValue(requester) { try await next(request, context) }
    }
}
