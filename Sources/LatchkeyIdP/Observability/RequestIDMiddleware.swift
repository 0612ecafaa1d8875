import Hummingbird
import HTTPTypes

/// Sends every answer back with `X-Request-Id`: the id Hummingbird gave the request and
/// put in its logger's metadata, so a user's report and the operator's log line (`serve
/// --log-format json`, `request_id`) can be matched.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = ProviderRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[Self.field] = context.id
        return response
    }

    /// `X-Request-Id`, made once: a name made from text is checked character by character.
    private static let field = HTTPField.Name("X-Request-Id")!
}
