import Foundation
import LatchkeyProtocol

/// The registration page: a bind link opened in a browser (docs/PROTOCOL.md section 9).
/// It says whose account the passkey is for, walks the job's steps (terms, an e-mailed
/// code) through the JSON endpoints, then creates the passkey (resident key preferred,
/// `none` attestation).
enum BindPage {
    static func page(job: String, token: String, username: String, displayName: String, recovery: Bool, context: ProviderContext) throws -> Page {
        let content = """
            <p>\(recovery ? "Replace the passkeys of" : "Add a passkey to") the account <strong>\(HTMLText.value(username))</strong> (\(HTMLText.value(displayName))).</p>
            \(recovery ? "<p class=\"warning\">When the new passkey is saved, every other passkey and sign-in of this account stops working.</p>" : "")
            <p class="hint">Only continue if you asked for this link. Anyone who finishes it can sign in as this account.</p>
            <form id="step-form" hidden></form>
            <div id="create" hidden><div class="actions"><button id="create-button" type="button">Create a passkey</button></div></div>
            <div id="done" hidden><h2 id="done-heading" tabindex="-1">Passkey saved</h2>
            <p>You can now sign in as <strong>\(HTMLText.value(username))</strong> with it.</p>
            <p><a id="continue" hidden>Continue</a></p></div>
            """
        return Page(title: recovery ? "Recover your account" : "Create a passkey", content: content, data: [
            .kind: .text(PageTicket.Kind.bind.rawValue),
            .token: .text(try PageTicket.token(.bind, binding: job, context: context)),
            .start: .text(context.url("\(ProtocolPath.bind)/\(job)", token: token)),
        ])
    }
}
