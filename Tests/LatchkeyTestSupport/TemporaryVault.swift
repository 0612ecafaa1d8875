public import Foundation
public import Latchkey
public import LatchkeyOAuth
import LatchkeyCrypto
import Logging

/// A temporary vault directory with a key file, and a facade over it allowed to talk to
/// the providers named: the vault every facade test starts from. Removed by `cleanUp()`.
public struct TemporaryVault: Sendable {
    public let temporary: TemporaryDirectory
    public let keyFile: URL

    public var directory: URL { temporary.url }

    public init() throws {
        temporary = try TemporaryDirectory()
        keyFile = try temporary.keyFile()
    }

    public func embedded(
        allowing domains: [String],
        stepHandler: Embedded.StepHandler? = nil,
        transport: any HTTPTransport = HTTP1Transport(),
        pollInterval: Duration = .milliseconds(50),
        configure: (inout Embedded.Configuration) -> Void = { _ in }
    ) throws -> Embedded {
        var logger = Logger(label: "latchkey-tests")
        logger.logLevel = .warning
        var configuration = Embedded.Configuration(
            vaultDirectory: directory.appendingPathComponent("vault"),
            keySource: .keyFile(keyFile),
            allowedDomains: domains,
            stepHandler: stepHandler,
            logger: logger,
            transport: transport
        )
        configuration.transferPollInterval = pollInterval
        configure(&configuration)
        return try Embedded(configuration: configuration)
    }

    public func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }
}
