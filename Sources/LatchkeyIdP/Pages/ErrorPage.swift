import Foundation
import Hummingbird
import LatchkeyOAuth
import Logging

/// An error shown to a person: the reason in words, never JSON, with the status the API
/// would answer. Nothing here redirects: an authorization request whose client or
/// redirect URI did not check out must not send the browser anywhere (RFC 6749 §4.1.2.1).
enum ErrorPage {
    static func page(_ error: ProviderError) -> Page {
        Page(title: heading(error.kind), content: "<p class=\"error\">\(HTMLText.value(error.reason))</p>", status: error.httpStatus)
    }

    static func heading(_ kind: ProviderError.Kind) -> String {
        switch kind {
        case .notFound: "This link does not work (any more)"
        case .throttled: "Too many attempts"
        case .failed, .unavailable: "The provider could not answer"
        default: "This request cannot continue"
        }
    }

    /// Runs `body` and answers its page; a refusal becomes an error page, a store outage
    /// a 503 page (the log has the details, as for the API).
    static func rendering(_ context: ProviderContext, logger: Logger, _ body: () async throws -> Page) async -> Response {
        do {
            return try await body().response(context: context)
        } catch let error as ProviderError {
            logger.info("page refused", metadata: ["status": .stringConvertible(error.httpStatus.code), "error": .string(error.code.rawValue)])
            return page(error).response(context: context)
        } catch let error as StoreError {
            logger.error("store failure", metadata: ["code": .string("\(error.code)"), "reason": .string(error.reason)])
            return page(.temporarilyUnavailable("the provider cannot reach its store; try again shortly")).response(context: context)
        } catch {
            logger.error("page failed", metadata: ["error": .string("\(type(of: error))")])
            return page(.serverError("internal error")).response(context: context)
        }
    }
}
