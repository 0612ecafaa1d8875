import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyOAuth
import LatchkeyProtocol
import Logging

/// JSON in and out, bounded request bodies, and errors as OAuth error objects.
enum HTTPSupport {
    static let maximumBodySize = 64 * 1024

    /// `value` as the JSON body, keys sorted so output is stable.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The protocol's types encode strings, numbers, booleans and nested types of
        // those, which cannot fail; a failure would be a programming error, answered 500.
        guard let data = try? encoder.encode(value) else {
            return json(data: Data(#"{"error":"server_error","error_description":"internal error"}"#.utf8), status: .internalServerError)
        }
        return json(data: data, status: status)
    }

    /// An error answer (RFC 6749 §5.2).
    static func error(_ code: ErrorCode, _ description: String, status: HTTPResponse.Status) -> Response {
        json(ErrorResponse(error: code, description: description), status: status)
    }

    /// Every JSON answer may carry a token, a code or a user's data: none is cached
    /// (`Cache-Control: no-store`, and `Pragma: no-cache` for HTTP/1.0 caches, RFC 6749 §5.1).
    static func json(data: Data, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: jsonHeaders, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The fields of every JSON answer, made once: a field name made from text is checked
    /// character by character each time.
    private static let jsonHeaders: HTTPFields = [.contentType: ProtocolPath.jsonMediaType, .cacheControl: "no-store", .init("Pragma")!: "no-cache"]

    /// The request body as `type`; anything else is `400 invalid_request` saying what was
    /// expected.
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, expected: String) async throws -> T {
        try decode(type, from: try await body(request), expected: expected)
    }

    static func decode<T: Decodable>(_ type: T.Type, from data: Data, expected: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw ProviderError.badRequest(.invalidRequest, "the body must be \(expected)", underlying: error)
        }
    }

    static func body(_ request: Request) async throws -> Data {
        Data(try await collect(request.body).readableBytesView)
    }

    /// A request body, at most `maximumBodySize` bytes (else 413).
    static func collect(_ body: RequestBody) async throws -> ByteBuffer {
        do {
            return try await body.collect(upTo: maximumBodySize)
        } catch {
            throw tooLarge(error)
        }
    }

    /// 413 for a body that could not be collected within ``maximumBodySize``.
    static func tooLarge(_ error: any Error) -> ProviderError {
        ProviderError(.tooLarge, code: .invalidRequest, reason: "request body over \(maximumBodySize) bytes", underlying: error)
    }

    /// An `application/x-www-form-urlencoded` body (RFC 6749 §4.1.3); a repeated
    /// parameter is an error (RFC 6749 §3.1).
    static func form(_ request: Request) async throws -> [String: String] {
        try form(parsing: String(decoding: try await body(request), as: UTF8.self))
    }

    /// The form parser itself, apart from HTTP (the fuzz harness calls it).
    static func form(parsing text: String) throws -> [String: String] {
        try FormURLEncoded.parse(text[...])
    }

    /// The query parameters, decoded once from the raw query (Hummingbird's
    /// `queryParameters` has already percent-decoded its values, so decoding them again
    /// would read `%2B` as a space). A repeated parameter is an error (RFC 6749 §3.1).
    static func query(_ request: Request) throws -> [String: String] {
        try FormURLEncoded.parse(request.uri.query?[...] ?? "")
    }

    /// The caller's capability token (`?token=`, docs/PROTOCOL.md sections 2, 5 and 6),
    /// 1 to 256 characters.
    static func capabilityToken(_ request: Request, maximumLength: Int = ProtocolIdentifier.maximumLength) throws -> String {
        guard let token = try query(request)[ProtocolPath.tokenParameter], ProtocolIdentifier.isValid(token, maximumLength: maximumLength) else {
            throw ProviderError.badRequest(.invalidRequest, "token missing")
        }
        return token
    }

    /// Every `DPoP` request header (RFC 9449 §4.1): more than one is refused later.
    static func dpopProofs(_ request: Request) -> [String] {
        request.headers[values: .init(DPoPProof.headerName)!]
    }

    /// The access token of `Authorization: Bearer …` or `Authorization: DPoP …` (schemes
    /// compared without case, RFC 9110 §11.1), with the request's DPoP proofs.
    static func accessToken(_ request: Request) -> TokenEndpoint.Presentation? {
        guard let header = request.headers[.authorization], let (type, token) = AccessTokenType.presentation(in: header) else { return nil }
        return type == .dpop
            ? TokenEndpoint.Presentation(scheme: .dpop, token: token, dpopProofs: dpopProofs(request))
            : TokenEndpoint.Presentation(scheme: .bearer, token: token, dpopProofs: [])
    }

    /// The token of `Authorization: Bearer …` (the admin API's scheme, RFC 6750 §2.1).
    static func bearerToken(_ request: Request) -> String? {
        guard let header = request.headers[.authorization], let (type, token) = AccessTokenType.presentation(in: header), type == .bearer else { return nil }
        return token
    }
}

/// Takes the client's address from the configured forwarding header
/// (``ProviderConfiguration/forwardedHeader``) when, and only when, the connection comes
/// from a trusted proxy (``ProviderConfiguration/trustedProxies``). The other header is
/// never read.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = ProviderRequestContext
    let trusted: [IPNetwork]
    let header: ForwardedHeader
    /// ``header``'s field name, made once rather than per request.
    private let field: HTTPField.Name

    init(trusted: [IPNetwork], header: ForwardedHeader) {
        self.trusted = trusted
        self.header = header
        field = HTTPField.Name(header.fieldName)!
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let client = ForwardedFor.client(peer: context.peerAddress, header: header, lines: request.headers[values: field], trusted: trusted)
        if client != context.peerAddress { context.forwardedClient = client }
        return try await next(request, context)
    }
}

/// Applies the rate limit to the endpoints that take a code or an assertion, keyed on the
/// route the router matched (``bucket(_:)``), never on the raw path: the router ignores
/// empty segments, so `/token/`, `//token` and `/token//` all reach the token endpoint,
/// and a limit on the raw path would count each spelling apart.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = ProviderRequestContext
    let limiter: RateLimiter
    let audit: AuditLog
    let database: any ProviderDatabase

    /// A group of the public router whose routes are behind the limit, at the provider's
    /// configured rate. It runs once the router has matched a route, so it sees the
    /// route's path template (`context.endpointPath`).
    static func group(on router: Router<ProviderRequestContext>, provider: Provider) -> RouterGroup<ProviderRequestContext> {
        router.group().add(middleware: RateLimitMiddleware(
            limiter: RateLimiter(limit: provider.context.configuration.rateLimitPerMinute), audit: provider.context.audit, database: provider.context.database
        ))
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let route = context.endpointPath, let bucket = request.method == .post ? Self.bucket(route.dropFirst()) : Self.readBucket(route.dropFirst()) {
            let count = limiter.count(bucket + "|" + context.limitKey)
            guard count <= limiter.limit else {
                context.logger.warning("rate limit reached", metadata: ["endpoint": .string(bucket), "client": .string(context.clientAddress)])
                if count == limiter.limit + 1 {
                    // Once per address, endpoint and window: a flood is one event.
                    await audit.recordQuietly(AuditEntry(
                        .rateLimitEngaged, outcome: .failure, error: .slowDown, actor: .anonymous,
                        details: AuditEvent.Details(limit: bucket, windowSeconds: limiter.windowSeconds)
                    ), in: database, logger: context.logger)
                }
                return HTTPSupport.error(.slowDown, "too many requests; try again in a minute", status: .tooManyRequests)
            }
        }
        return try await next(request, context)
    }

    /// The rate-limit bucket of a `POST` to the route `template` (its path template as
    /// the router has it, without the leading `/`: `v1/authenticate/{session}`), named
    /// after the endpoint; nil for endpoints that are not limited.
    static func bucket(_ template: Substring) -> String? {
        if template == ProtocolPath.token { return ProtocolPath.token }
        if template == ProtocolPath.deviceAuthorization { return ProtocolPath.deviceAuthorization }
        if template == ProtocolPath.authorizationChallenge { return ProtocolPath.authorizationChallenge }
        if template.hasPrefix(ProtocolPath.deviceApproval) { return ProtocolPath.deviceApproval }
        if template.hasPrefix(ProtocolPath.authenticate + "/") { return ProtocolPath.authenticate }
        if template.hasPrefix(ProtocolPath.bind + "/"), template.hasSuffix("/code") { return ProtocolPath.bind + "/code" }
        if template.hasPrefix(ProtocolPath.transfers) { return ProtocolPath.transfers }
        if template.hasPrefix("v1/attestation/") { return "v1/attestation" }
        if template.hasPrefix(ProtocolPath.signUp) || template.hasPrefix(ProtocolPath.recovery) { return ProtocolPath.signUp }
        if template == ProtocolPath.sshCertificates { return ProtocolPath.sshCertificates }
        return nil
    }

    /// The bucket of a `GET` that costs the store a read whoever asks (the SSH CA's key
    /// revocation list and keys, which hosts fetch now and then): a flood of them is
    /// refused like any other; nil for the rest.
    static func readBucket(_ template: Substring) -> String? {
        template == ProtocolPath.sshRevocations || template == ProtocolPath.sshAuthority ? String(template) : nil
    }
}

/// Reads each request's body before any route sees it, bounded in size (413) and in time
/// (408): a client that trickles a body byte by byte would otherwise hold its connection
/// and a task for as long as it likes (the idle timeout only needs one byte now and then).
/// The deadline itself is the connection's timer (``HTTPConnectionHandler``), which fails
/// the body's stream when it passes; here that failure becomes the 408.
struct RequestBodyMiddleware: RouterMiddleware {
    typealias Context = ProviderRequestContext
    let timeout: Duration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard RequestBodyDeadline.announcesBody(request.headers) else {
            return try await next(request, context)
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: HTTPSupport.maximumBodySize)
        } catch is RequestBodyDeadline.Expired {
            context.logger.warning("request body too slow", metadata: ["client": .string(context.clientAddress), "path": .string(request.uri.path)])
            throw ProviderError(.tooSlow, code: .invalidRequest, reason: "the request body did not arrive within \(timeout)")
        } catch {
            throw HTTPSupport.tooLarge(error)
        }
        var request = request
        request.body = RequestBody(buffer: buffer)
        return try await next(request, context)
    }
}

/// Turns ``ProviderError``s (and anything else thrown) into JSON error responses.
struct ProviderErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ProviderError {
            // The error code and description, never the request's secrets.
            var metadata: Logger.Metadata = [
                "path": .string(request.uri.path), "status": .stringConvertible(error.httpStatus.code), "error": .string(error.code.rawValue),
            ]
            metadata["cause"] = error.cause.map(Logger.MetadataValue.string)
            context.logger.info("request refused", metadata: metadata)
            var response = HTTPSupport.error(error.code, error.reason, status: error.httpStatus)
            if let challenge = error.wwwAuthenticate { response.headers[.wwwAuthenticate] = challenge }
            if let nonce = error.dpopNonce { response.headers[.init(DPoPProof.nonceHeaderName)!] = nonce }
            return response
        } catch let error as StoreError {
            // The store's trouble is the operator's to read in the log; the client learns
            // only whether trying again later may help.
            context.logger.error("store failure", metadata: ["path": .string(request.uri.path), "code": .string("\(error.code)"), "reason": .string(error.reason)])
            switch error.code {
            case .unavailable, .conflict, .diskFull:
                return HTTPSupport.error(.temporarilyUnavailable, "the provider cannot reach its store; try again shortly", status: .serviceUnavailable)
            default:
                return HTTPSupport.error(.serverError, "internal error", status: .internalServerError)
            }
        } catch let error as HTTPError {
            return HTTPSupport.error(.invalidRequest, error.body ?? "\(error.status)", status: error.status)
        } catch {
            context.logger.error("request failed", metadata: ["path": .string(request.uri.path), "error": .string("\(type(of: error))")])
            return HTTPSupport.error(.serverError, "internal error", status: .internalServerError)
        }
    }
}

/// Makes sure the store is migrated and its secrets loaded before a route runs: once at
/// start, or later, request by request, when the database was unreachable then (503
/// meanwhile, and while a preparation takes longer than a request should wait:
/// ``ProviderContext/prepareForRequest(wait:)``). The liveness probe answers regardless.
struct ReadinessMiddleware: RouterMiddleware {
    typealias Context = ProviderRequestContext
    let context: ProviderContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if !HealthRoutes.livenessPaths.contains(request.uri.path) {
            try await self.context.prepareForRequest()
        }
        return try await next(request, context)
    }
}
