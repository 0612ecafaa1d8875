import Foundation
@testable import LatchkeyIdP
import Logging

extension Provider {
    /// A provider over `configuration`'s store for `body`, its store closed afterwards
    /// whether `body` throws or not (an unclosed SQLite connection traps when it is freed).
    static func closing(_ configuration: ProviderConfiguration, _ body: (Provider) async throws -> Void) async throws {
        let provider = try await Provider.open(configuration)
        do {
            try await body(provider)
        } catch {
            await provider.context.database.close()
            throw error
        }
        await provider.context.database.close()
    }

    /// ``closing(_:_:)`` on an in-memory store.
    static func withInMemoryStore(_ body: (Provider) async throws -> Void) async throws {
        try await closing(ProviderConfiguration(adminToken: "t"), body)
    }
}
