import ArgumentParser
import Foundation
import Latchkey

/// How the command answers flow steps: from `--code` / `--credential`, else by asking on
/// a terminal, else by failing with what to pass.
struct StepAnswers: ParsableArguments {
    @Option(help: ArgumentHelp("The verification code, when the provider asks for one (verify-code).", valueName: "code"))
    var code: String?

    func handler() -> Embedded.StepHandler {
        let code = self.code
        return { step in
            switch step.name {
            case .verifyCode:
                if step.attempt == 1, let code { return .code(code) }
                if let previous = step.previousError, !Terminal.isInteractive {
                    throw CommandFailure("the provider refused the code: \(previous)")
                }
                guard Terminal.isInteractive else {
                    throw CommandFailure("the provider asks for a verification code (\(step.message ?? "check your e-mail")): pass --code")
                }
                if let previous = step.previousError { Terminal.note(previous) }
                if let message = step.message { Terminal.note(message) }
                guard let entered = Terminal.ask("Code: ")?.trimmingCharacters(in: .whitespaces), !entered.isEmpty else {
                    throw CommandFailure("no code entered")
                }
                return .code(entered)
            case .chooseCredential:
                let ids = step.candidates.map(\.id)
                guard Terminal.isInteractive else {
                    throw CommandFailure("\(ids.count) credentials fit; pass --credential with one of: \(ids.joined(separator: ", "))")
                }
                if let previous = step.previousError { Terminal.note(previous) }
                for (index, candidate) in step.candidates.enumerated() {
                    Terminal.note("  \(index + 1). \(candidate.user.name) (\(candidate.user.displayName))  \(candidate.id)")
                }
                guard let answer = Terminal.ask("Which credential? ")?.trimmingCharacters(in: .whitespaces) else {
                    throw CommandFailure("no credential chosen")
                }
                if let number = Int(answer), step.candidates.indices.contains(number - 1) {
                    return .credential(id: step.candidates[number - 1].id)
                }
                return .credential(id: answer)
            default:
                throw CommandFailure("the flow asks for \"\(step.name)\", which this command cannot answer")
            }
        }
    }
}
