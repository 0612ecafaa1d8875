import Foundation
import LatchkeyProtocol
import Testing

/// The admin API's typed endpoints (docs/PROTOCOL.md, "Admin API"): a value put into a
/// path is one segment, whatever it holds.
@Suite("Admin API endpoints")
struct AdminEndpointTests {
    @Test("a path parameter cannot climb, add a segment or start a query")
    func hostileParameters() throws {
        #expect(AdminAPI.identity.path("../../metrics") == "admin/identities/%2E%2E%2F%2E%2E%2Fmetrics")
        #expect(AdminAPI.identity.path("ada?limit=1#x") == "admin/identities/ada%3Flimit%3D1%23x")
        #expect(AdminAPI.identity.path("%2e%2e") == "admin/identities/%252e%252e")
        #expect(AdminAPI.credentials.path("a/b") == "admin/identities/a%2Fb/credentials")
    }

    @Test("the number of values must fit the template")
    func parameterCount() {
        #expect(AdminAPI.identity.parameterNames == ["identity"])
        #expect(AdminAPI.identity.path() == nil)
        #expect(AdminAPI.identity.path("a", "b") == nil)
        #expect(AdminAPI.outbox.path() == "admin/outbox")
    }
}
