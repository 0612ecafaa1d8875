#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Logging

/// One run of an ``Embedded`` operation: its id for events, its logger, and the app's step
/// handler.
struct FlowContext: Sendable {
    let id = UUID()
    let operation: String
    let hub: FlowEventHub
    let logger: Logger
    let stepHandler: Embedded.StepHandler?
    /// The time this flow may still spend waiting on providers.
    let deadline: FlowDeadline

    init(operation: String, hub: FlowEventHub, logger: Logger, stepHandler: Embedded.StepHandler?, deadline: FlowDeadline) {
        self.operation = operation
        self.hub = hub
        self.stepHandler = stepHandler
        self.deadline = deadline
        var logger = logger
        logger[metadataKey: "flow"] = .string(String(id.uuidString.prefix(8)))
        logger[metadataKey: "operation"] = .string(operation)
        self.logger = logger
    }

    func emit(_ kind: FlowEvent.Kind) {
        hub.publish(FlowEvent(flowID: id, operation: operation, kind: kind, date: Date()))
    }

    /// Asks the app's step handler; without one the flow ends with an error naming the step.
    func ask(_ step: FlowStep) async throws -> StepAnswer {
        guard let stepHandler else {
            throw LatchkeyError.stepUnsupported(reason: "the flow needs an answer to \"\(step.name)\"\(step.message.map { " (\($0))" } ?? "") and this app has no step handler for it",
                step: step.name.rawValue
            )
        }
        logger.debug("asking the step handler", metadata: ["step": .string(step.name.rawValue), "attempt": .stringConvertible(step.attempt)])
        do {
            return try await stepHandler(step)
        } catch let error as LatchkeyError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as CryptoError {
            // The handler failed in Latchkey's own layers: their code says more than
            // "the answer failed", and the error itself is kept.
            var wrapped = LatchkeyError(error)
            wrapped.step = step.name.rawValue
            throw wrapped
        } catch {
            throw LatchkeyError.invalidStepAnswer(reason: "the step handler for \"\(step.name)\" failed: \(error)", step: step.name.rawValue, underlying: error
            )
        }
    }

    /// Runs an operation: `started`, then `completed` or `failed`, every error as a
    /// ``LatchkeyError``.
    func run<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        emit(.started)
        do {
            let result = try await FlowDeadline.$current.withValue(deadline) { try await body() }
            emit(.completed)
            return result
        } catch {
            let failure = LatchkeyError.wrapping(error)
            logger.debug("flow failed", metadata: ["errorCode": .string(failure.code.description)])
            emit(.failed(failure))
            throw failure
        }
    }
}
