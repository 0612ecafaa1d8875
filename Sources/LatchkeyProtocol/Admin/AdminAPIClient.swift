#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyOAuth

/// A caller of the admin API (docs/PROTOCOL.md, "Admin API") through its typed
/// ``AdminAPI/Endpoint``s: `latchkey admin`, the demo, the benchmark and the tests all
/// call the provider through this one client.
///
/// The admin token is a secret: it goes only into the `Authorization` header of requests
/// to ``issuer``, and this type prints nothing of it.
public struct AdminAPIClient: Sendable {
    /// What the provider answered: the typed answer on a 2xx status, the error object
    /// otherwise (RFC 6749 §5.2, ``ErrorResponse``), and the status and body as they came.
    public struct Reply<Answer: Sendable>: Sendable {
        public var status: Int
        /// Nil on a status outside 2xx, or a body that is not an `Answer`.
        public var answer: Answer?
        /// The error object of a refusal, when the body is one.
        public var refusal: ErrorResponse?
        public var body: Data
    }

    public let issuer: URL
    private let token: String
    private let transport: any HTTPTransport

    public init(issuer: URL, token: String, transport: any HTTPTransport = HTTP1Transport()) {
        self.issuer = issuer
        self.token = token
        self.transport = transport
    }

    /// The largest answer read (an admin page of 500 identities fits many times over).
    public static let maximumAnswerSize = 4 << 20

    /// Calls `endpoint` with `parameters` in its path, `query` in its query string and
    /// `body` as JSON. Throws when the parameters do not fit the template or the transport
    /// fails; any HTTP answer is a ``Reply``.
    public func call<Body, Answer>(
        _ endpoint: AdminAPI.Endpoint<Body, Answer>, _ parameters: [String] = [], query: [(String, String)] = [], body: Body? = nil
    ) async throws -> Reply<Answer> {
        guard let path = endpoint.path(parameters) else {
            throw OAuthError.malformedResponse(reason: "\(endpoint.template) takes \(endpoint.parameterNames.count) path parameters, not \(parameters.count)")
        }
        var headers = ["Authorization": AccessTokenType.bearer.authorization(token), "Accept": "application/json"]
        var data: Data?
        if let body, !(body is AdminAPI.Empty) {
            headers["Content-Type"] = "application/json"
            data = try JSONEncoder().encode(body)
        }
        // The path is escaped already (``AdminAPI/Endpoint/path(_:)-(String...)``):
        // `appendingPathComponent` would escape its `%` again, and a username with a `.` or
        // a non-ASCII letter would reach the provider as another name.
        var base = issuer.absoluteString
        if !base.hasSuffix("/") { base += "/" }
        guard var url = URL(string: base + path) else {
            throw OAuthError.malformedResponse(reason: "\(endpoint.template) with these parameters is not a URL")
        }
        if !query.isEmpty, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            url = FormEncoding.url(components, appending: query) ?? url
        }
        let response = try await transport.send(TransportRequest(method: endpoint.method, url: url, headers: headers, body: data))
        let body = response.body.count <= Self.maximumAnswerSize ? response.body : Data()
        guard (200..<300).contains(response.status) else {
            return Reply(status: response.status, refusal: try? JSONDecoder().decode(ErrorResponse.self, from: body), body: body)
        }
        return Reply(status: response.status, answer: try? JSONDecoder().decode(Answer.self, from: body), body: body)
    }

    /// ``call(_:_:query:body:)`` with the path parameters listed.
    public func call<Body, Answer>(
        _ endpoint: AdminAPI.Endpoint<Body, Answer>, _ parameters: String..., query: [(String, String)] = [], body: Body? = nil
    ) async throws -> Reply<Answer> {
        try await call(endpoint, parameters, query: query, body: body)
    }
}
