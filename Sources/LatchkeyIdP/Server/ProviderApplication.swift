import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The provider as a service: its listeners (``ProviderHTTPServer``) and its background
/// services, run together and stopped together. It is a Hummingbird application to its
/// callers (`runService()`, the router tests' `test(.router)`), with a server of its own
/// in place of Hummingbird's.
struct ProviderApplication: ApplicationProtocol {
    typealias Responder = RouterResponder<ProviderRequestContext>

    let responder: Responder
    let logger: Logger
    var configuration: ApplicationConfiguration { .init(serverName: ProviderHTTPServer.serverName) }
    /// The background services and the admin listener, if any: stopped after the public
    /// listener, in reverse order.
    let backgroundServices: [any Service]
    let listener: ProviderHTTPServer

    func run() async throws {
        let group = ServiceGroup(configuration: .init(services: backgroundServices + [listener], logger: logger))
        try await group.run()
    }
}
