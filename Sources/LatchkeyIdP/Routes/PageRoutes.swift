import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyProtocol

/// The browser pages' own routes: the static script and stylesheet, and the sign-up and
/// recovery pages (docs/PROTOCOL.md section 9). The sign-in, registration and device
/// pages share their routes with the JSON API (``wantsPage(_:)``).
enum PageRoutes {
    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        router.get(RouterPath(PagePath.script)) { _, _ in
            asset(PageScript.source, type: "text/javascript; charset=utf-8")
        }
        router.get(RouterPath(PagePath.stylesheet)) { _, _ in
            asset(PageStylesheet.source, type: "text/css; charset=utf-8")
        }
        router.get(RouterPath(PagePath.signUp)) { _, context in
            await ErrorPage.rendering(provider.context, logger: context.logger) {
                guard provider.context.configuration.selfRegistration else { throw ProviderError.notFound("this provider does not take sign-ups") }
                return try EnrollmentPage.signUp(context: provider.context)
            }
        }
        router.get(RouterPath(PagePath.recovery)) { _, context in
            await ErrorPage.rendering(provider.context, logger: context.logger) {
                guard provider.context.configuration.recovery else { throw ProviderError.notFound("this provider does not offer account recovery") }
                return try EnrollmentPage.recovery(context: provider.context)
            }
        }
    }

    /// Whether a `GET` is a browser navigating (`Accept` names `text/html`, as every
    /// browser's navigation request does), not the JSON API (`Accept: application/json`).
    static func wantsPage(_ request: Request) -> Bool {
        guard let accept = request.headers[.accept] else { return false }
        return accept.contains("text/html") && !accept.contains(ProtocolPath.jsonMediaType)
    }

    /// A static asset: the same for everyone, so cacheable for an hour.
    static func asset(_ source: String, type: String) -> Response {
        Response(status: .ok, headers: [
            .contentType: type, .cacheControl: "public, max-age=3600", .xContentTypeOptions: "nosniff",
            .contentSecurityPolicy: "default-src 'none'; frame-ancestors 'none'",
        ], body: .init(byteBuffer: ByteBuffer(string: source)))
    }
}
