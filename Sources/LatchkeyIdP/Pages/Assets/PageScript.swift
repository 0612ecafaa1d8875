/// The one script of the browser pages, served as a static file from
/// ``PagePath/script`` so the pages' CSP needs no `'unsafe-inline'`. It reads the page's
/// data from `#page-data`, talks to the same JSON endpoints the CLI uses with `fetch`
/// (sending the page token, docs/SECURITY.md "Browser pages"), and writes outside text
/// into the page only as `textContent`, never as HTML.
///
/// WebAuthn options and responses are converted by hand (base64url ⇄ bytes) rather than
/// with `PublicKeyCredential.parseRequestOptionsFromJSON`/`toJSON` (WebAuthn L3 §5.1.8,
/// §5.1.10), which older browsers lack; the JSON sent is `AuthenticationResponseJSON` /
/// `RegistrationResponseJSON` exactly.
enum PageScript {
    static let source = #"""
"use strict";
(() => {
  const dataElement = document.getElementById("page-data");
  if (!dataElement) return;
  const page = JSON.parse(dataElement.textContent);
  const $ = (id) => document.getElementById(id);

  // --- base64url (RFC 4648 §5) ---------------------------------------------------------
  const encode = (buffer) => {
    let text = "";
    for (const byte of new Uint8Array(buffer)) text += String.fromCharCode(byte);
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  };
  const decode = (text) => {
    const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  };
  const descriptors = (list) => list ? list.map((d) => ({ type: d.type, id: decode(d.id), transports: d.transports })) : [];

  // --- WebAuthn options in, responses out (L3 §5.5, §5.4, §5.1.8) ---------------------
  const requestOptions = (json) => ({
    challenge: decode(json.challenge), rpId: json.rpId, timeout: json.timeout,
    userVerification: json.userVerification, allowCredentials: descriptors(json.allowCredentials),
  });
  const creationOptions = (json) => ({
    rp: json.rp, user: { id: decode(json.user.id), name: json.user.name, displayName: json.user.displayName },
    challenge: decode(json.challenge), pubKeyCredParams: json.pubKeyCredParams, timeout: json.timeout,
    excludeCredentials: descriptors(json.excludeCredentials), authenticatorSelection: json.authenticatorSelection,
    attestation: json.attestation,
  });
  const assertionJSON = (credential) => {
    const r = credential.response;
    const response = { clientDataJSON: encode(r.clientDataJSON), authenticatorData: encode(r.authenticatorData), signature: encode(r.signature) };
    if (r.userHandle && r.userHandle.byteLength > 0) response.userHandle = encode(r.userHandle);
    const json = { id: credential.id, rawId: encode(credential.rawId), type: credential.type, response, clientExtensionResults: {} };
    if (credential.authenticatorAttachment) json.authenticatorAttachment = credential.authenticatorAttachment;
    return json;
  };
  const registrationJSON = (credential) => {
    const r = credential.response;
    const response = { clientDataJSON: encode(r.clientDataJSON), attestationObject: encode(r.attestationObject) };
    if (typeof r.getTransports === "function") response.transports = r.getTransports();
    const json = { id: credential.id, rawId: encode(credential.rawId), type: credential.type, response, clientExtensionResults: {} };
    if (credential.authenticatorAttachment) json.authenticatorAttachment = credential.authenticatorAttachment;
    return json;
  };

  // Outside text the script shows (a client's name, an address) gets the treatment the
  // server gives its own (HTMLText.visible): direction and control characters spelled out
  // (line breaks kept, for a multi-line message such as the terms).
  const visible = (text) => String(text).replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => "[U+" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0") + "]");

  // --- talking to the provider ---------------------------------------------------------
  const say = (text) => { $("status").textContent = text; };
  const fail = (text) => { const e = $("error"); e.textContent = visible(text); e.hidden = false; say(""); };
  const clear = () => { const e = $("error"); e.textContent = ""; e.hidden = true; };
  const request = async (url, method, body) => {
    const headers = { "Accept": "application/json", "Latchkey-Page-Token": page.token };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let answer;
    try {
      answer = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body),
                                  credentials: "omit", referrerPolicy: "no-referrer", redirect: "error" });
    } catch (e) {
      throw new Error("The provider could not be reached. Check your connection and try again.");
    }
    let json = {};
    try { json = await answer.json(); } catch (e) { json = {}; }
    if (!answer.ok) throw new Error(json.error_description || ("The provider refused this request (" + answer.status + ")."));
    return json;
  };
  const post = (url, body) => request(url, "POST", body === undefined ? {} : body);
  const sameOrigin = (url) => { try { return new URL(url, location.href).origin === location.origin; } catch (e) { return false; } };
  const webURL = (url) => { try { const u = new URL(url); return u.protocol === "https:" || u.protocol === "http:"; } catch (e) { return false; } };
  // A redirect URI the provider built from a registered one: http(s) or an app's own
  // scheme (RFC 8252 §7.1), never one that runs script.
  const navigable = (url) => { try { return !["javascript:", "data:", "vbscript:", "blob:"].includes(new URL(url).protocol); } catch (e) { return false; } };
  const passkeyError = (e) => {
    if (e && e.name === "NotAllowedError") return "The passkey request was cancelled or timed out. Try again.";
    if (e && e.name === "InvalidStateError") return "This authenticator already holds a passkey for this account.";
    if (e && e.name === "SecurityError") return "This browser refused a passkey for this site.";
    return (e && e.message) || "Something went wrong.";
  };
  const busy = (button, on) => { if (button) { button.disabled = on; button.setAttribute("aria-busy", on ? "true" : "false"); } };

  // --- steps (docs/PROTOCOL.md section 4): a form per step, built with DOM calls --------
  const labels = { code: "Code", givenName: "Given name", familyName: "Family name", email: "E-mail address",
                   username: "Username", accept: "I accept these terms" };
  const showStep = (step, next) => {
    const form = $("step-form");
    form.replaceChildren();
    form.hidden = false;
    if (step.message) { const p = document.createElement("p"); p.textContent = visible(step.message); form.append(p); }
    let first = null;
    for (const field of step.fields || []) {
      const id = "field-" + field.name.replace(/[^A-Za-z0-9-]/g, "");
      const wrapper = document.createElement("div");
      wrapper.className = "field";
      const input = document.createElement("input");
      input.id = id;
      input.name = field.name;
      const label = document.createElement("label");
      label.htmlFor = id;
      label.textContent = labels[field.name] || field.name;
      if (field.kind === "boolean") {
        input.type = "checkbox";
        wrapper.className = "field check";
        wrapper.append(input, label);
      } else {
        input.type = field.kind === "email" ? "email" : "text";
        if (field.kind) input.autocomplete = field.kind;
        if (field.kind === "one-time-code") { input.inputMode = "numeric"; }
        wrapper.append(label, input);
      }
      input.required = !!field.required;
      form.append(wrapper);
      first = first || input;
    }
    const button = document.createElement("button");
    button.type = "submit";
    button.textContent = "Continue";
    form.append(button);
    form.onsubmit = async (event) => {
      event.preventDefault();
      clear();
      const values = {};
      for (const field of step.fields || []) {
        const input = form.elements.namedItem(field.name);
        values[field.name] = field.kind === "boolean" ? (input.checked ? "true" : "false") : input.value.trim();
      }
      busy(button, true);
      try { await next(await post(step.submit, values)); } catch (e) { fail(passkeyError(e)); } finally { busy(button, false); }
    };
    if (first) first.focus();
  };

  // --- the sign-in page (/authorize) ---------------------------------------------------
  const signIn = () => {
    const button = $("sign-in-button");
    let pending = null;
    const finish = async (credential) => {
      say("Checking your passkey…");
      const answer = await post(page.submit, assertionJSON(credential));
      if (answer.consent) { askConsent(answer.consent); return; }
      if (!navigable(answer.redirectURL)) throw new Error("The provider answered an unusable redirect.");
      say("Signed in. Returning to the application…");
      location.assign(answer.redirectURL);
    };
    const ask = async (mediation) => {
      if (pending) pending.abort();
      pending = new AbortController();
      const options = { publicKey: requestOptions(page.options), signal: pending.signal };
      if (mediation) options.mediation = mediation;
      return navigator.credentials.get(options);
    };
    $("sign-in").addEventListener("submit", async (event) => {
      event.preventDefault();
      clear();
      busy(button, true);
      try {
        say("Waiting for your passkey…");
        await finish(await ask());
      } catch (e) {
        fail(passkeyError(e));
      } finally { busy(button, false); }
    });
    const cancel = $("cancel-button");
    if (cancel) cancel.addEventListener("click", async () => {
      clear();
      try {
        if (pending) pending.abort();
        const answer = await post(page.cancel);
        if (!navigable(answer.redirectURL)) throw new Error("The provider answered an unusable redirect.");
        location.assign(answer.redirectURL);
      } catch (e) { fail(passkeyError(e)); }
    });
    // A third-party client: who asks, for what; the decision goes to our own endpoint.
    const askConsent = (consent) => {
      if (!sameOrigin(consent.submit)) throw new Error("The provider answered an unusable consent request.");
      $("sign-in").hidden = true;
      if ($("sign-in-links")) $("sign-in-links").hidden = true;
      $("consent-client").textContent = visible(consent.clientName) + " (" + visible(consent.clientID) + ")";
      $("consent-host").textContent = visible(consent.redirectHost);
      $("consent-resource").textContent = consent.resource ? visible(consent.resource) : "(this provider)";
      $("consent-scope").textContent = consent.scopes.length ? visible(consent.scopes.join(" ")) : "(none)";
      $("consent").hidden = false;
      say("");
      $("consent-heading").focus();
      const decide = async (decision, button) => {
        clear();
        busy(button, true);
        try {
          const answer = await post(consent.submit, { ticket: consent.ticket, decision });
          if (!navigable(answer.redirectURL)) throw new Error("The provider answered an unusable redirect.");
          say(decision === "approve" ? "Allowed. Returning to the application…" : "Denied. Returning to the application…");
          location.assign(answer.redirectURL);
        } catch (e) { fail(passkeyError(e)); } finally { busy(button, false); }
      };
      $("allow-button").addEventListener("click", () => decide("approve", $("allow-button")));
      $("deny-button").addEventListener("click", () => decide("deny", $("deny-button")));
    };
    // Conditional mediation (autofill, L3 §5.1.4): offered when the browser has it and the
    // request names no credentials; the button works either way.
    const discoverable = !page.options.allowCredentials || page.options.allowCredentials.length === 0;
    if (discoverable && window.PublicKeyCredential && PublicKeyCredential.isConditionalMediationAvailable) {
      PublicKeyCredential.isConditionalMediationAvailable().then(async (available) => {
        if (!available) return;
        try { await finish(await ask("conditional")); } catch (e) { if (e && e.name !== "AbortError") fail(passkeyError(e)); }
      });
    }
  };

  // --- the registration page (the bind link) -------------------------------------------
  const bind = () => {
    const button = $("create-button");
    let challenge = null;
    const handle = (reply) => {
      if (reply.step) { $("create").hidden = true; showStep(reply.step, handle); return; }
      if (reply.publicKey) {
        challenge = reply;
        $("step-form").hidden = true;
        $("create").hidden = false;
        say("");
        button.focus();
        return;
      }
      throw new Error("The provider answered something this page does not know.");
    };
    button.addEventListener("click", async () => {
      clear();
      busy(button, true);
      try {
        say("Follow your browser's prompt to create the passkey…");
        const credential = await navigator.credentials.create({ publicKey: creationOptions(challenge.publicKey) });
        say("Saving your passkey…");
        const answer = await post(challenge.submit, registrationJSON(credential));
        $("create").hidden = true;
        $("done").hidden = false;
        say("");
        const next = answer.postBindingRedirectURI;
        if (next && webURL(next)) { const link = $("continue"); link.href = next; link.hidden = false; }
        $("done-heading").focus();
      } catch (e) {
        fail(passkeyError(e));
      } finally { busy(button, false); }
    });
    say("Loading…");
    request(page.start, "GET").then(handle).catch((e) => fail(passkeyError(e)));
  };

  // --- the device approval page (/device, RFC 8628 §3.3) -------------------------------
  const device = () => {
    let found = null;
    $("lookup").addEventListener("submit", async (event) => {
      event.preventDefault();
      clear();
      const button = $("lookup-button");
      busy(button, true);
      try {
        found = await post(page.lookup, { userCode: $("user-code").value.trim() });
        $("request-client").textContent = visible(found.clientName + " (" + found.clientID + ")");
        $("request-scope").textContent = found.scope.length ? visible(found.scope.join(" ")) : "(none)";
        $("request-when").textContent = visible(found.requestedAt);
        $("request-where").textContent = visible(found.requestedFrom);
        if (found.login) {
          $("login-user").textContent = visible(found.login.user);
          $("login-service").textContent = visible(found.login.service);
          $("login-remote").textContent = found.login.remote_host ? visible(found.login.remote_host) : "(this computer)";
          $("request-login").hidden = false;
        }
        $("lookup").hidden = true;
        $("request").hidden = false;
        $("request-heading").focus();
      } catch (e) { fail(passkeyError(e)); } finally { busy(button, false); }
    });
    const decide = async (decision, button) => {
      clear();
      busy(button, true);
      try {
        say("Confirm with your passkey…");
        const credential = await navigator.credentials.get({ publicKey: requestOptions(found.publicKey) });
        await post(found.submit, { decision, credential: assertionJSON(credential) });
        $("request").hidden = true;
        $("decided").hidden = false;
        $("decided-text").textContent = decision === "approve"
          ? "Approved. The device is signing in; you can close this page."
          : "Denied. The device will not be signed in.";
        say("");
        $("decided-heading").focus();
      } catch (e) { fail(passkeyError(e)); } finally { busy(button, false); }
    };
    $("approve-button").addEventListener("click", () => decide("approve", $("approve-button")));
    $("deny-button").addEventListener("click", () => decide("deny", $("deny-button")));
  };

  // --- sign-up and recovery (docs/PROTOCOL.md section 6) -------------------------------
  const enroll = () => {
    const handle = (reply) => {
      if (reply.step) { showStep(reply.step, handle); return; }
      if (reply.bindURL && sameOrigin(reply.bindURL)) { say("Code accepted. Opening the passkey page…"); location.assign(reply.bindURL); return; }
      throw new Error("The provider answered something this page does not know.");
    };
    $("start").addEventListener("submit", async (event) => {
      event.preventDefault();
      clear();
      const button = $("start-button");
      busy(button, true);
      try {
        const reply = await post(page.start, { username: $("username").value.trim() });
        $("start").hidden = true;
        handle(reply);
      } catch (e) { fail(passkeyError(e)); } finally { busy(button, false); }
    });
  };

  if (!window.PublicKeyCredential) { fail("This browser does not support passkeys (WebAuthn)."); }
  ({ "sign-in": signIn, bind, device, "sign-up": enroll, recovery: enroll })[page.kind]();
})();
"""#
}
