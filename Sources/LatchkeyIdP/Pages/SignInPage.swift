import Foundation
import LatchkeyProtocol
import LatchkeyWebAuthn

/// The sign-in page: what `GET /authorize` answers a browser (docs/PROTOCOL.md section
/// 9). It asks for a passkey with conditional mediation where the browser offers it and a
/// button always, posts the assertion to the authenticate endpoint, and follows the
/// redirect with `code`, `state` and `iss` that the JSON flow answers (section 3). For a
/// third-party client the person has not consented to, it shows the consent prompt the
/// assertion's answer carries and posts the decision ("Consent for third-party clients").
enum SignInPage {
    static func page(session: String, options: PublicKeyCredentialRequestOptionsJSON, clientName: String, loginHint: String?, context: ProviderContext) throws -> Page {
        let submit = context.url("\(ProtocolPath.authenticate)/\(session)").absoluteString
        let hint = (loginHint ?? "").utf8.count <= 256 ? loginHint ?? "" : ""
        var links: [String] = []
        if context.configuration.selfRegistration {
            links.append("<a href=\"\(HTMLText.escape(context.url(PagePath.signUp).path))\">Create an account</a>")
        }
        if context.configuration.recovery {
            links.append("<a href=\"\(HTMLText.escape(context.url(PagePath.recovery).path))\">Lost your passkey?</a>")
        }
        let content = """
            <p>to continue to <strong>\(HTMLText.value(clientName))</strong></p>
            <form id="sign-in" novalidate>
            <div class="field"><label for="username">Username</label>
            <input id="username" name="username" autocomplete="username webauthn" autocapitalize="none" spellcheck="false" value="\(HTMLText.attribute(hint))"></div>
            <p class="hint">Pick your passkey from the suggestions, or press the button.</p>
            <div class="actions"><button id="sign-in-button" type="submit">Sign in with a passkey</button>
            <button id="cancel-button" type="button" class="secondary">Cancel</button></div>
            </form>
            \(links.isEmpty ? "" : "<p class=\"hint\" id=\"sign-in-links\">" + links.joined(separator: " · ") + "</p>")
            <section id="consent" hidden>
            <h2 id="consent-heading" tabindex="-1">Allow this application?</h2>
            <p>An application that is not part of \(HTMLText.value(context.configuration.displayName)) asks to act for you.</p>
            <dl>
            <dt>It calls itself</dt><dd id="consent-client"></dd>
            <dt>It returns to</dt><dd id="consent-host"></dd>
            <dt>For</dt><dd id="consent-resource"></dd>
            <dt>Access</dt><dd id="consent-scope"></dd>
            </dl>
            <div class="actions"><button id="allow-button" type="button">Allow</button>
            <button id="deny-button" type="button" class="secondary">Deny</button></div>
            </section>
            """
        return Page(title: "Sign in", content: content, data: [
            .kind: .text(PageTicket.Kind.signIn.rawValue),
            .token: .text(try PageTicket.token(.signIn, binding: session, context: context)),
            .options: .value(options),
            .submit: .text(submit),
            .cancel: .text(submit + "/cancel"),
        ])
    }
}
