import Foundation
import LatchkeyProtocol

/// The sign-up and recovery pages (docs/PROTOCOL.md sections 6 and 9): a username, then
/// the steps the JSON endpoints ask for (profile, the e-mailed code), then the bind link,
/// opened as the registration page. They say nothing the API does not: recovery answers
/// alike for names that exist and names that do not.
enum EnrollmentPage {
    static func signUp(context: ProviderContext) throws -> Page {
        try page(.signUp, title: "Create an account", intro: "Choose a username. You will sign in with a passkey, not a password.",
                 start: ProtocolPath.signUp, context: context)
    }

    static func recovery(context: ProviderContext) throws -> Page {
        try page(.recovery, title: "Recover your account",
                 intro: "Lost your passkey? Enter your username. If the account has an e-mail address, a code is sent to it.",
                 start: ProtocolPath.recovery, context: context)
    }

    private static func page(_ kind: PageTicket.Kind, title: String, intro: String, start: String, context: ProviderContext) throws -> Page {
        let content = """
            <form id="start" novalidate>
            <p>\(HTMLText.escape(intro))</p>
            <div class="field"><label for="username">Username</label>
            <input id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required></div>
            <div class="actions"><button id="start-button" type="submit">Continue</button></div>
            </form>
            <form id="step-form" hidden></form>
            """
        return Page(title: title, content: content, data: [
            .kind: .text(kind.rawValue),
            .token: .text(try PageTicket.token(kind, binding: "", context: context)),
            .start: .text(context.url(start).absoluteString),
        ])
    }
}
