import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Latchkey

/// How the command answers flow steps: from `--code` / `--credential` / `--yes`, else by
/// asking on a terminal, else by failing with the option to pass.
struct StepAnswers: ParsableArguments {
    @Option(help: ArgumentHelp("The verification code, when the provider asks for one (verify-code); `-` reads it from stdin when it is asked.", valueName: "code"))
    var code: String?

    /// A step the command cannot answer here: one line naming what to pass.
    static func unanswerable(_ step: FlowStep, _ message: String) -> LatchkeyError {
        LatchkeyError.stepUnsupported(reason: message, step: step.name.rawValue)
    }

    /// `givenName` → `given-name`, the option that supplies a profile field.
    static func optionName(_ field: String) -> String {
        field.reduce(into: "") { name, character in
            if character.isUppercase { name += "-" + character.lowercased() } else { name.append(character) }
        }
    }

    func handler() -> Embedded.StepHandler {
        Self.handler(code: code, approveImports: false)
    }

    /// - Parameters:
    ///   - code: `--code`, for the first `verify-code`.
    ///   - approveImports: `--yes` of `latchkey export`.
    static func handler(code: String?, approveImports: Bool) -> Embedded.StepHandler {
        { step in
            switch step.name {
            case .verifyCode:
                if code == "-" {
                    // A script answers on stdin when the code is asked (it may read the
                    // mail only once the code was sent).
                    if let previous = step.previousError { Terminal.note(previous) }
                    guard let line = readLine(strippingNewline: true)?.trimmingSpaces(), !line.isEmpty else {
                        throw Self.unanswerable(step, "no code on stdin")
                    }
                    return .code(line)
                }
                if step.attempt == 1, let code { return .code(code) }
                if let previous = step.previousError, !Terminal.isInteractive {
                    throw Self.unanswerable(step, "the provider refused the code: \(previous)")
                }
                guard Terminal.isInteractive else {
                    throw Self.unanswerable(step, "the provider asks for a verification code (\(step.message ?? "check your e-mail")): pass --code")
                }
                if let previous = step.previousError { Terminal.note(previous) }
                if let message = step.message { Terminal.note(message) }
                guard let entered = Terminal.ask("Code: ")?.trimmingSpaces(), !entered.isEmpty else {
                    throw Self.unanswerable(step, "no code entered")
                }
                return .code(entered)
            case .chooseCredential:
                let ids = step.candidates.map(\.id)
                guard Terminal.isInteractive else {
                    throw Self.unanswerable(step, "\(ids.count) credentials fit; pass --credential with one of: \(ids.joined(separator: ", "))")
                }
                if let previous = step.previousError { Terminal.note(previous) }
                for (index, candidate) in step.candidates.enumerated() {
                    Terminal.note("  \(index + 1). \(candidate.user.name) (\(candidate.user.displayName))  \(candidate.id)")
                }
                guard let answer = Terminal.ask("Which credential? ")?.trimmingSpaces() else {
                    throw Self.unanswerable(step, "no credential chosen")
                }
                if let number = Int(answer), step.candidates.indices.contains(number - 1) {
                    return .credential(id: step.candidates[number - 1].id)
                }
                return .credential(id: answer)
            case .enrollProfile:
                let missing = step.fields.filter { $0.required && step.values[$0.name] == nil }
                guard Terminal.isInteractive else {
                    throw Self.unanswerable(step, "the provider also needs \(missing.map { "--" + Self.optionName($0.name) }.joined(separator: ", "))")
                }
                var values: [String: String] = [:]
                for field in missing {
                    guard let value = Terminal.ask("\(field.name): ")?.trimmingSpaces(), !value.isEmpty else {
                        throw Self.unanswerable(step, "no \(field.name) given")
                    }
                    values[field.name] = value
                }
                return StepAnswer(fields: values)
            case .confirmImport:
                if approveImports { return .approve }
                // Without a terminal and without --yes, the import is declined (so the other
                // device learns at once); the command then fails saying why.
                guard Terminal.isInteractive else { return .decline }
                let answer = Terminal.ask("Approve? [y/N] ")?.trimmingSpaces().lowercased()
                return answer == "y" || answer == "yes" ? .approve : .decline
            default:
                throw Self.unanswerable(step, "the flow asks for \"\(step.name)\", which this command cannot answer")
            }
        }
    }
}
