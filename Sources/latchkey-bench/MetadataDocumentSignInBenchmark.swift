import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn

/// A person's sign-in as a client known by its client ID metadata document (issue 76),
/// the document cached and the consent remembered, against the same sign-in as a client
/// registered by hand, in the same run, in alternating rounds. The sign-in is the redirect
/// flow over HTTP (the authorization request, the authenticate endpoint with a WebAuthn
/// assertion, the code at `/token` with the ID token checked), as a browser and an MCP
/// client drive it. Target: the metadata-document client's p50 at most 1.1x the
/// registered client's.
struct MetadataDocumentSignInBenchmark {
    var seconds: Double
    static let redirect = "http://127.0.0.1/callback"
    /// Paired rounds, each a registered-client round then a metadata-document one; the
    /// figure is the median of the pairs' p50 ratios, which the machine's noise moves least.
    static let rounds = 9

    func run() async throws -> [ReportLine] {
        let router = Router()
        router.get("agent/client.json") { request, _ in
            let document: [String: JSONValue] = [
                "client_id": .string("http://\(request.head.authority ?? "")\(request.uri.path)"), "client_name": "Bench agent",
                "redirect_uris": [.string(Self.redirect)], "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            ]
            return Response(
                status: .ok, headers: [.contentType: "application/json", .cacheControl: "max-age=3600"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: try JSONValue.object(document).json()))
            )
        }
        return try await LiveServer.run(router, label: "metadata-documents") { documents in
            try await ProviderBenchmark.withProvider(configure: {
                $0.clientMetadataDocuments.enabled = true
                $0.clientMetadataDocuments.localNetwork = true
            }) { issuer, scratch, _ in
                try await measure(issuer: issuer, scratch: scratch, documentClient: documents.absoluteString + "/agent/client.json")
            }
        }
    }

    private func measure(issuer: URL, scratch: URL, documentClient: String) async throws -> [ReportLine] {
        let transport = HTTP1Transport()
        let person = try await Person.bound(issuer: issuer, scratch: scratch, transport: transport)
        guard let redirect = URL(string: Self.redirect) else { throw BenchmarkError("redirect URI") }
        let registered = try OAuthClient(configuration: .init(issuer: issuer, clientID: "latchkey-cli", redirectURI: redirect, transport: transport))
        let known = try OAuthClient(configuration: .init(issuer: issuer, clientID: documentClient, redirectURI: redirect, transport: transport))
        // The first sign-in fetches the document and asks for consent, which is given.
        try await person.signIn(known, consenting: true)
        let benchmark = ProviderBenchmark(seconds: seconds / Double(2 * Self.rounds))
        var byDocument: [ProviderBenchmark.Figures] = []
        var byRegistration: [ProviderBenchmark.Figures] = []
        for _ in 0..<Self.rounds {
            byRegistration.append(try await benchmark.measure(concurrency: 1) { _ in try await person.signIn(registered) })
            byDocument.append(try await benchmark.measure(concurrency: 1) { _ in try await person.signIn(known) })
        }
        func median(_ figures: [ProviderBenchmark.Figures], _ value: (ProviderBenchmark.Figures) -> Double) -> Double {
            let sorted = figures.map(value).sorted()
            return sorted[sorted.count / 2]
        }
        let errors = (byDocument + byRegistration).reduce(0) { $0 + $1.errors }
        let firstError = (byDocument + byRegistration).compactMap(\.firstError).first
        let ratios = zip(byDocument, byRegistration).map { $0.p50 / $1.p50 }.sorted()
        return [
            ReportLine(
                name: "sign-in p50, metadata-document client / registered client (median of \(Self.rounds) paired rounds)", latchkey: ratios[ratios.count / 2],
                reference: nil, referenceName: "pairs from \(String(format: "%.2f", ratios.first ?? 0)) to \(String(format: "%.2f", ratios.last ?? 0))", target: .atMost(1.1)
            ),
            ReportLine(
                name: "sign-in p50 ms, client by metadata document (cached, consent remembered)", latchkey: median(byDocument, \.p50),
                reference: median(byRegistration, \.p50), referenceName: "registered client p50"
            ),
            ReportLine(
                name: "sign-ins/s, client by metadata document", latchkey: median(byDocument, \.throughput),
                reference: median(byRegistration, \.throughput), referenceName: "registered client sign-ins/s"
            ),
            ReportLine(name: "sign-in errors", latchkey: Double(errors), reference: nil, referenceName: firstError ?? "none", target: .atMost(0)),
        ]
    }

    /// One person with one passkey in a software authenticator, signing in over HTTP.
    struct Person: Sendable {
        let issuer: URL
        let authenticator: SoftwareAuthenticator
        let transport: HTTP1Transport
        var origin: String { WebOrigin(issuer)?.description ?? issuer.absoluteString }

        static func bound(issuer: URL, scratch: URL, transport: HTTP1Transport) async throws -> Person {
            let directory = scratch.appendingPathComponent("metadata-document-person")
            let keyFile = try vaultKeyFile(in: directory)
            let person = Person(
                issuer: issuer, authenticator: SoftwareAuthenticator(vault: try KeyVault.open(at: directory.appendingPathComponent("vault"), key: .keyFile(keyFile))),
                transport: transport
            )
            let admin = AdminAPIClient(issuer: issuer, token: ServeProcess.adminToken, transport: transport)
            let created = try await admin.call(AdminAPI.createIdentity, body: AdminAPI.IdentityCreation(username: "agent-user", email: nil))
            guard let answer = created.answer, let bindURL = URL(string: answer.bindURL) else { throw BenchmarkError("create the identity: HTTP \(created.status)") }
            let job = try await person.json("GET", bindURL)
            let (registration, _) = try person.authenticator.makeCredential(try PublicKeyCredentialCreationOptionsJSON(json: job.json()), origin: person.origin)
            _ = try await person.json("POST", try Self.url(job["submit"]), body: try registration.json(), expecting: 201)
            return person
        }

        /// The redirect flow to its end: tokens with a checked ID token. With `consenting`,
        /// the consent the provider asks for is given; without, being asked is an error.
        func signIn(_ client: OAuthClient, consenting: Bool = false) async throws {
            let authorization = try await client.authorizationRequest(scopes: [OAuthScope.openID])
            let started = try await json("GET", authorization.url)
            let authenticateURL = try Self.url(started["authenticateURL"])
            let challenge = try await json("GET", authenticateURL)
            let (assertion, _) = try authenticator.getAssertion(try PublicKeyCredentialRequestOptionsJSON(json: challenge.json()), origin: origin)
            var answer = try await json("POST", authenticateURL, body: try assertion.json())
            if let consent = answer["consent"] {
                guard consenting else { throw BenchmarkError("the provider asked for consent again") }
                let decision = try JSONValue.object(["ticket": consent["ticket"] ?? .null, "decision": "approve"]).json()
                answer = try await json("POST", try Self.url(consent["submit"]), body: decision)
            }
            let code = try await client.authorizationCode(from: try Self.url(answer["redirectURL"]), for: authorization)
            guard try await client.exchange(code: code, for: authorization).idTokenClaims != nil else { throw BenchmarkError("no ID token") }
        }

        private func json(_ method: String, _ url: URL, body: Data? = nil, expecting status: Int = 200) async throws -> JSONValue {
            var headers = ["Accept": ProtocolPath.jsonMediaType]
            if body != nil { headers["Content-Type"] = ProtocolPath.jsonMediaType }
            let response = try await transport.send(TransportRequest(method: method, url: url, headers: headers, body: body))
            guard response.status == status else { throw BenchmarkError("\(method) \(url.path): HTTP \(response.status)") }
            return try JSONValue(json: response.body)
        }

        private static func url(_ value: JSONValue?) throws -> URL {
            guard let text = value?.stringValue, let url = URL(string: text) else { throw BenchmarkError("the provider answered no URL") }
            return url
        }
    }
}
