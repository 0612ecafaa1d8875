import Foundation
import Logging
import ServiceLifecycle

/// Seals waiting audit events once an ``interval`` (a second by default,
/// `ProviderConfiguration.auditSealInterval`) (docs/ARCHITECTURE.md, "The audit
/// log"), so a row is chained and covered by a signed head within a second or so of its
/// decision, whoever reads the log and whenever: that is the window in which someone who
/// can write the database could still drop a row unseen. When nothing waits, a tick costs
/// one indexed lookup and no lock.
struct AuditSealing: Service {
    let context: ProviderContext
    let interval: Duration

    func run() async throws {
        // A service that returns early ends the whole service group: with the log off,
        // this one waits for shutdown like the rest.
        guard context.audit.enabled else {
            try? await gracefulShutdown()
            return
        }
        let sealer = AuditSealer(context: context)
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let interval = interval
            _ = try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
            do {
                try await context.prepare()
                await context.audit.writeDeferred(in: context.database, logger: context.logger)
                guard try await sealer.hasWaiting() else { continue }
                _ = try await context.configuration.clock.bound { try await sealer.seal() }
            } catch let error as StoreError {
                // The store's own words: a code and a reason, never a row's contents.
                context.logger.warning("audit sealing failed", metadata: ["error": .string("\(error.code)"), "reason": .string(error.reason)])
            } catch {
                context.logger.warning("audit sealing failed", metadata: ["error": .string("\(type(of: error))")])
            }
        }
    }
}
