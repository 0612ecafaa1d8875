import ArgumentParser
import Foundation
import Latchkey

extension LatchkeyCommand {
    /// `latchkey bind <url>`: registers a new credential from a bind URL or deep link.
    struct Bind: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Bind a new credential from a bind URL (https://…/v1/bind/… or <scheme>://bind?…).")

        @Argument(help: "The bind URL.")
        var url: String

        @OptionGroup var store: StoreOptions
        @OptionGroup var answers: StepAnswers

        func run() async throws {
            guard let link = URL(string: url), let provider = Embedded.provider(of: link), let host = provider.host else {
                throw ValidationError("\(url) is not a bind URL (https://<provider>/v1/bind/<job>?token=… or <scheme>://bind?api_base_url=…&job_id=…&token=…)")
            }
            // The user typed this link: its provider is the one host this run may contact.
            let embedded = try store.embedded(allowing: [host], answers: answers)
            let bound = try await embedded.registerCredential(from: link)
            if store.json {
                var object: [String: Any] = ["credential": bound.credential.jsonObject]
                if let redirect = bound.postBindingRedirectURI { object["postBindingRedirectURI"] = redirect.absoluteString }
                return try store.printJSON(object)
            }
            print("Bound credential \(bound.credential.id)")
            print("  user \(bound.credential.user.name) at \(bound.credential.issuer?.absoluteString ?? bound.credential.rpID)")
            if let redirect = bound.postBindingRedirectURI { print("Next: \(redirect.absoluteString)") }
        }
    }

    /// `latchkey list`: the credentials in the vault.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the credentials in the vault.")

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let credentials = try await store.embedded().credentials()
            if store.json { return try store.printJSON(credentials.map(\.jsonObject)) }
            if credentials.isEmpty { return print("No credentials in \(store.directory.path).") }
            for credential in credentials {
                let used = credential.lastUsedAt.map { "last used \(ISO8601DateFormatter().string(from: $0))" } ?? "never used"
                print("\(credential.id)  \(credential.user.name)  \(credential.issuer?.absoluteString ?? credential.rpID)  \(credential.state)  \(used)")
            }
        }
    }

    /// `latchkey delete <id>`: deletes a credential's key from this host.
    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a credential from the vault (the provider is not told).")

        @Argument(help: "The credential id, as `latchkey list` shows it.")
        var id: String

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let deleted = try await store.embedded().deleteCredential(id: id)
            if store.json { return try store.printJSON(["id": id, "deleted": deleted]) }
            print(deleted ? "Deleted \(id)." : "No credential \(id) in the vault; nothing deleted.")
        }
    }
}

extension Credential {
    /// The `--json` form of a credential.
    var jsonObject: [String: Any] {
        let dates = ISO8601DateFormatter()
        var object: [String: Any] = [
            "id": id,
            "rpID": rpID,
            "user": ["id": user.id, "name": user.name, "displayName": user.displayName],
            "createdAt": dates.string(from: createdAt),
            "signCount": Int(signCount),
            "state": state.rawValue,
            "algorithm": algorithm,
        ]
        if let issuer { object["issuer"] = issuer.absoluteString }
        if let lastUsedAt { object["lastUsedAt"] = dates.string(from: lastUsedAt) }
        return object
    }
}
