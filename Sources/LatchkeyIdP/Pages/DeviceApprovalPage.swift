import Foundation
import LatchkeyProtocol

/// The device approval page, RFC 8628's `verification_uri` (§3.3; `?user_code=` is
/// `verification_uri_complete`, §3.3.1): the person enters or confirms the code, sees the
/// client, scopes, when and from where it was asked (and, for a host's `pam_latchkey`
/// sign-in, the account, the service and the remote address, section 13), and approves
/// or denies with a passkey, over the same exchange as `latchkey approve`
/// (docs/PROTOCOL.md section 7).
enum DeviceApprovalPage {
    static func page(userCode: String?, context: ProviderContext) throws -> Page {
        // A code from the query is only a prefill: printable ASCII, short, else dropped.
        let prefill = userCode.flatMap { code in
            code.utf8.count <= 32 && code.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) ? code : nil
        } ?? ""
        let content = """
            <form id="lookup" novalidate>
            <p>A device asked to sign in as you. Enter the code it shows.</p>
            <div class="field"><label for="user-code">Code</label>
            <input id="user-code" name="user_code" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" value="\(HTMLText.escape(prefill))"></div>
            <div class="actions"><button id="lookup-button" type="submit">Continue</button></div>
            </form>
            <section id="request" hidden>
            <h2 id="request-heading" tabindex="-1">Is this you?</h2>
            <dl>
            <dt>Application</dt><dd id="request-client"></dd>
            <dt>Access</dt><dd id="request-scope"></dd>
            <dt>Asked at</dt><dd id="request-when"></dd>
            <dt>Asked from</dt><dd id="request-where"></dd>
            </dl>
            <div id="request-login" hidden>
            <h3>A sign-in to a computer</h3>
            <dl>
            <dt>Account</dt><dd id="login-user"></dd>
            <dt>Service</dt><dd id="login-service"></dd>
            <dt>Connecting from</dt><dd id="login-remote"></dd>
            </dl>
            </div>
            <p class="warning">Approve only if you started this sign-in yourself, on a device you are holding. Someone who sent you this code could be trying to sign in as you.</p>
            <div class="actions"><button id="approve-button" type="button">Approve with a passkey</button>
            <button id="deny-button" type="button" class="secondary">Deny</button></div>
            </section>
            <section id="decided" hidden><h2 id="decided-heading" tabindex="-1">Done</h2><p id="decided-text"></p></section>
            """
        return Page(title: "Sign in on another device", content: content, data: [
            .kind: .text(PageTicket.Kind.device.rawValue),
            .token: .text(try PageTicket.token(.device, binding: "", context: context)),
            .lookup: .text(context.url(ProtocolPath.deviceApproval).absoluteString),
        ])
    }
}
