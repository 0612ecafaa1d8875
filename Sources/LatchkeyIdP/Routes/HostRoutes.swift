import Foundation
import Hummingbird
import LatchkeyOAuth
import LatchkeyProtocol

/// The hosts' endpoint (docs/PROTOCOL.md section 14): `GET /v1/hosts/directory`, the
/// accounts and groups a host may see, with the directory version as its `ETag`, so an
/// unchanged directory costs a host a 304 (RFC 9110 §13.1.2, §15.4.5).
enum HostRoutes {
    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        router.get(RouterPath(ProtocolPath.hostDirectory)) { request, _ in
            guard let presentation = HTTPSupport.accessToken(request) else { throw ProviderError.bearerRequired }
            let query = try HTTPSupport.query(request)
            let limit = try query[HostDirectoryPage.Query.limit].map { text in
                guard text.utf8.count <= 6, let value = Int(text) else { throw ProviderError.badRequest(.invalidRequest, "limit must be a number") }
                return value
            }
            let answer = try await provider.hostDirectory.read(
                presentation, cursor: query[HostDirectoryPage.Query.cursor], limit: limit, ifNoneMatch: request.headers[.ifNoneMatch]
            )
            switch answer {
            case .notModified(let version):
                return try TokenRoutes.withNonce(Response(status: .notModified, headers: [.eTag: HostDirectory.entityTag(version), .cacheControl: "private, no-cache"]), provider)
            case .page(let page, let version):
                var response = HTTPSupport.json(data: page.encodedJSON())
                response.headers[.eTag] = HostDirectory.entityTag(version)
                response.headers[.cacheControl] = "private, no-cache"
                return try TokenRoutes.withNonce(response, provider)
            }
        }
    }
}
