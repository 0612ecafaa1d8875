import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey

extension LatchkeyCommand {
    /// `latchkey desktop install|uninstall`: makes `latchkey open` the desktop's handler of
    /// Latchkey links (``DeepLinkRegistration``; docs/guides/desktop-links.md).
    struct Desktop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "desktop",
            abstract: "Register latchkey as the desktop's handler of Latchkey links, or take it out.",
            subcommands: [Install.self, Uninstall.self]
        )

        /// What both take.
        struct Placement: ParsableArguments {
            @Option(help: ArgumentHelp("The link scheme (default: latchkey).", valueName: "name"))
            var scheme = Open.defaultScheme

            @Flag(help: "For this user ($XDG_DATA_HOME/applications, xdg-mime; the default) or for every user of the host (/usr/local/share/applications, /etc/xdg/mimeapps.list).")
            var scope: ScopeChoice = .user

            enum ScopeChoice: String, EnumerableFlag {
                case user, system

                var setting: DeepLinkRegistration.Scope { self == .user ? .user : .system }
            }

            @Flag(help: "Print JSON.")
            var json = false

            func registration(command: [String]) throws -> DeepLinkRegistration {
                try DeepLinkRegistration(scheme: scheme, command: command, applicationName: "Latchkey", scope: scope.setting)
            }

            func report(_ outcome: DeepLinkRegistration.Outcome, _ registration: DeepLinkRegistration) throws {
                if json {
                    return try JSONOutput.print(DesktopOutput(
                        scheme: registration.scheme, desktopEntry: registration.desktopEntryFile.path, changed: outcome.changed, steps: outcome.steps
                    ))
                }
                for step in outcome.steps { TextOutput.line(step.prefix(1).uppercased() + step.dropFirst() + ".") }
            }
        }

        struct Install: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "install",
                abstract: "Write the desktop entry for `latchkey open` and make it the default for the scheme's links."
            )

            @OptionGroup var placement: Placement

            @Option(name: .customLong("allow-provider"), help: ArgumentHelp("A provider whose links `latchkey open` acts on, written into the Exec line (repeatable; or allow-provider lines in links.conf).", valueName: "url"))
            var allowProvider: [String] = []

            @Flag(help: "Take the scheme over from the application that handles it now.")
            var force = false

            func run() async throws {
                for provider in allowProvider {
                    _ = try LinkConfiguration.allowedProvider(provider) { ValidationError("--allow-provider: \($0)") }
                }
                let program = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
                var command = [program, "open"]
                if placement.scheme.lowercased() != Open.defaultScheme { command += ["--scheme", placement.scheme.lowercased()] }
                for provider in allowProvider { command += ["--allow-provider", provider] }
                let registration = try placement.registration(command: command)
                try placement.report(try registration.install(force: force), registration)
                if allowProvider.isEmpty, (try? LinkConfiguration.load())?.allowedProviders.isEmpty ?? true {
                    Terminal.note(
                        "No provider is allowed yet, so every link will be refused: run this again with --allow-provider URL, or add allow-provider = URL to \(LinkConfiguration.path.path)."
                    )
                }
            }
        }

        struct Uninstall: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "uninstall",
                abstract: "Delete the desktop entry `desktop install` wrote and take its default out; other applications' are left alone."
            )

            @OptionGroup var placement: Placement

            func run() async throws {
                let registration = try placement.registration(command: [])
                try placement.report(try registration.uninstall(), registration)
            }
        }
    }
}
