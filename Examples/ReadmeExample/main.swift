import Foundation
import Latchkey

// Usage: readme-example <bind URL> <issuer URL>
let arguments = CommandLine.arguments
guard arguments.count == 3, let bindURL = URL(string: arguments[1]), let issuer = URL(string: arguments[2]),
      let redirectURI = URL(string: "http://127.0.0.1/callback") else {
    print("usage: readme-example <bind URL> <issuer URL>")
    exit(2)
}

let embedded = try Embedded(configuration: .init(
    vaultDirectory: URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("readme-example-vault"),
    keySource: .passphrase(ProcessInfo.processInfo.environment["LATCHKEY_PASSPHRASE"] ?? ""),
    allowedDomains: [issuer.host ?? ""],
    stepHandler: { step in
        // verify-code: ask the user for the code the provider sent.
        print(step.message ?? "Code:")
        return .code(readLine() ?? "")
    }
))
let bound = try await embedded.registerCredential(from: bindURL)  // https://…/v1/bind/… or myapp://bind?…
print("Bound \(bound.credential.id) for \(bound.credential.user.name)")
let tokens = try await embedded.authenticate(issuer: issuer, clientID: "latchkey-cli", redirectURI: redirectURI)
print("Signed in as \(tokens.claims?.subject ?? "?"), access token expires \(tokens.expiresAt.map { "\($0)" } ?? "-")")
