// swift-tools-version:6.0
import PackageDescription

// Every Swift target builds in Swift 6 mode (complete strict concurrency) with
// internal imports by default, so no module leaks its dependencies through its API.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The release `latchkey --version` names; the Debian package's version starts with it
/// (scripts/package-deb.sh).
let latchkeyVersion = "0.5.0"

/// The commit the binaries are built from: `LATCHKEY_BUILD_COMMIT` when the packaging
/// script sets it (it builds from a copy of the tree, outside git), else what SwiftPM reads
/// of the checkout, marked `-dirty` when files differ from it.
let latchkeyCommit: String = {
    if let commit = Context.environment["LATCHKEY_BUILD_COMMIT"], !commit.isEmpty { return commit }
    guard let git = Context.gitInformation else { return "unknown" }
    return git.currentCommit + (git.hasUncommittedChanges ? "-dirty" : "")
}()

let package = Package(
    name: "Latchkey",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "LatchkeyCrypto", targets: ["LatchkeyCrypto"]),
        .library(name: "LatchkeyWebAuthn", targets: ["LatchkeyWebAuthn"]),
        .library(name: "LatchkeyOAuth", targets: ["LatchkeyOAuth"]),
        .library(name: "LatchkeyProtocol", targets: ["LatchkeyProtocol"]),
        .library(name: "Latchkey", targets: ["Latchkey"]),
        .library(name: "LatchkeyIdP", targets: ["LatchkeyIdP"]),
        .library(name: "LatchkeyHost", targets: ["LatchkeyHost"]),
        .library(name: "LatchkeyLogging", targets: ["LatchkeyLogging"]),
        .executable(name: "latchkey", targets: ["LatchkeyCLI"]),
        .executable(name: "latchkey-without-provider", targets: ["LatchkeyWithoutProviderCLI"]),
        .executable(name: "latchkey-bench", targets: ["latchkey-bench"]),
    ],
    dependencies: [
        // The reference identity provider and the test servers run on Hummingbird.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // The HTTP request parts Hummingbird's channel carries (NIOHTTPTypes, which
        // Hummingbird already uses), for the request body's deadline in the pipeline.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // Graceful shutdown of the in-process provider (Hummingbird already uses it).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // `swift package generate-documentation` for the DocC catalogs.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // The provider's store (docs/ARCHITECTURE.md, "The store"): SQLite by default, the
        // build sqlite-nio vendors (its C module, called directly from Store/SQLite/ so a
        // transaction is one call: "The store's unit of work"), and PostgreSQL for several
        // instances.
        .package(url: "https://github.com/vapor/sqlite-nio.git", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // The vault's file descriptors (reads and writes that retry EINTR and short writes).
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        // The provider's /metrics, in Prometheus text format (docs/ARCHITECTURE.md, "Operations").
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        // libcrypto from Debian's libssl-dev; the header pins the OpenSSL 3 API.
        .systemLibrary(
            name: "CLatchkeyOpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // The TPM commands tpm2-openssl does not expose (TPM2_Certify, credential
        // activation), over tpm2-tss's ESAPI from Debian's libtss2-dev: a few C functions
        // with flat byte interfaces, called only from LatchkeyCrypto/TPM/
        // (docs/ARCHITECTURE.md, "TPM attestation").
        .target(
            name: "CLatchkeyTSS",
            linkerSettings: [
                .linkedLibrary("tss2-esys"), .linkedLibrary("tss2-mu"), .linkedLibrary("tss2-rc"), .linkedLibrary("tss2-tctildr"),
            ]
        ),
        // pam_latchkey.so, the PAM module sshd, sudo and login load (Sources/pam_latchkey),
        // is not a product here: SwiftPM links every product through the Swift driver,
        // which puts the runtime's libraries (libstdc++, libm) ahead of any --as-needed, so
        // the module would load them into every PAM host. scripts/build-pam-module.sh
        // builds it with the C compiler alone (libpam and libc), and the tests load that.
        // The release and the commit, for `latchkey --version` (C, because a macro can carry
        // a string and a Swift build condition cannot).
        .target(
            name: "CLatchkeyBuildInfo",
            cSettings: [
                .define("LATCHKEY_BUILD_VERSION", to: "\"\(latchkeyVersion)\""),
                .define("LATCHKEY_BUILD_COMMIT", to: "\"\(latchkeyCommit)\""),
            ]
        ),
        .target(
            name: "LatchkeyCrypto",
            dependencies: ["CLatchkeyOpenSSL", "CLatchkeyTSS", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "LatchkeyWebAuthn",
            dependencies: ["LatchkeyCrypto"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "LatchkeyOAuth",
            dependencies: ["LatchkeyCrypto"],
            swiftSettings: strictSettings
        ),
        // The protocol's messages, defined once for the client and the provider
        // (docs/PROTOCOL.md).
        .target(
            name: "LatchkeyProtocol",
            dependencies: ["LatchkeyCrypto", "LatchkeyWebAuthn", "LatchkeyOAuth"],
            swiftSettings: strictSettings
        ),
        // The Embedded facade: the API an application links.
        .target(
            name: "Latchkey",
            dependencies: [
                "LatchkeyProtocol",
                "LatchkeyCrypto",
                "LatchkeyWebAuthn",
                "LatchkeyOAuth",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // `latchkey host`: a host's copy of the provider's directory, served to NSS through
        // systemd's User/Group Record Lookup API (varlink).
        .target(
            name: "LatchkeyHost",
            dependencies: [
                "Latchkey",
                "LatchkeyProtocol",
                "LatchkeyCrypto",
                "LatchkeyOAuth",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "LatchkeyIdP",
            dependencies: [
                "LatchkeyProtocol",
                "LatchkeyCrypto",
                "LatchkeyWebAuthn",
                "LatchkeyOAuth",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strictSettings
        ),
        // Log lines for the daemons: the provider's, the agent's and the host's (text, or
        // one JSON object a line), with nothing of the provider in them.
        .target(
            name: "LatchkeyLogging",
            dependencies: ["LatchkeyProtocol", "LatchkeyCrypto", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        // The `latchkey` command tree (swift-argument-parser), over the library modules and
        // without the provider: what `serve`, `demo` and an offline `admin events verify`
        // need of LatchkeyIdP the provider's binary installs (``ProviderCommands``), and the
        // host's binary hands those commands to it (docs/guides/install.md, "Two packages").
        .target(
            name: "LatchkeyCommandLine",
            dependencies: [
                "CLatchkeyBuildInfo",
                "Latchkey",
                "LatchkeyHost",
                "LatchkeyLogging",
                "LatchkeyProtocol",
                "LatchkeyOAuth",
                "LatchkeyCrypto",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // `latchkey`: the whole command tree with the provider (LatchkeyIdP) installed,
        // what `swift run latchkey` and the tests run, and what the latchkey-provider
        // package installs as /usr/libexec/latchkey/latchkey-provider.
        // Linked with the Swift runtime and Foundation inside (-static-stdlib, as
        // `swift build --static-swift-stdlib` does): loading and binding them as a dozen
        // shared libraries took ten milliseconds of every command's start, more than a
        // command answered by the key agent does (docs/PERFORMANCE.md, "Agent"). Nothing
        // links this target's objects (the tests and the benchmark start the binary), so
        // no test binary mixes a static runtime with the dynamic one the test libraries use.
        .executableTarget(
            name: "LatchkeyCLI",
            dependencies: [
                "LatchkeyCommandLine",
                "Latchkey",
                "LatchkeyIdP",
                "LatchkeyLogging",
                "LatchkeyProtocol",
                "LatchkeyOAuth",
                "LatchkeyCrypto",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings + [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux]))],
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux]))]
        ),
        // `latchkey` as the Debian package installs it for people and hosts: the same tree
        // without the provider's server stack (HTTP server, PostgreSQL, SQLite) and without
        // Foundation's networking and ICU, so it is less than half the size; `serve`,
        // `demo` and an offline `admin events verify` hand over to the full binary.
        .executableTarget(
            name: "LatchkeyWithoutProviderCLI",
            dependencies: ["LatchkeyCommandLine"],
            swiftSettings: strictSettings + [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux]))],
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux]))]
        ),
        .executableTarget(
            name: "latchkey-bench",
            dependencies: [
                "LatchkeyCrypto", "LatchkeyWebAuthn", "LatchkeyOAuth", "LatchkeyProtocol", "LatchkeyIdP", "Latchkey",
                // The persisted runs start `latchkey serve` processes, so it is built alongside.
                "LatchkeyCLI",
                // Requests from chosen loopback addresses, for the runs under attack.
                "LatchkeyTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                // A server of SwiftNIO alone, measured beside `latchkey serve` (BareHTTPServer).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The README's library example, compiled so it stays true (a test checks that the
        // README shows this file).
        .executableTarget(
            name: "readme-example",
            dependencies: ["Latchkey"],
            path: "Examples/ReadmeExample",
            // As an app would build it: `import Latchkey` alone, without MemberImportVisibility.
            swiftSettings: [.enableUpcomingFeature("InternalImportsByDefault"), .enableUpcomingFeature("ExistentialAny")]
        ),
        // A vault writer the crash test starts and SIGKILLs (a dependency of the tests so
        // `swift test` builds it).
        .executableTarget(
            name: "latchkey-vault-stress",
            dependencies: ["LatchkeyCrypto"],
            swiftSettings: strictSettings
        ),
        // What the test targets share: temporary directories and key files, hex, live
        // servers with a graceful stop, child processes, the Python interop runner.
        .target(
            name: "LatchkeyTestSupport",
            dependencies: [
                "LatchkeyCrypto", "LatchkeyOAuth", "LatchkeyProtocol", "LatchkeyIdP", "Latchkey",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/LatchkeyTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LatchkeyCryptoTests",
            dependencies: ["LatchkeyCrypto", "LatchkeyOAuth", "LatchkeyTestSupport", "latchkey-vault-stress"],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LatchkeyWebAuthnTests",
            dependencies: ["LatchkeyWebAuthn", "LatchkeyCrypto", "LatchkeyOAuth", "LatchkeyTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LatchkeyOAuthTests",
            dependencies: [
                "LatchkeyOAuth",
                "LatchkeyCrypto",
                "LatchkeyTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LatchkeyTests",
            dependencies: [
                "Latchkey", "LatchkeyHost", "LatchkeyProtocol", "LatchkeyTestSupport", "LatchkeyIdP", "LatchkeyOAuth", "LatchkeyCrypto", "LatchkeyWebAuthn", "latchkey-vault-stress",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LatchkeyIdPTests",
            dependencies: [
                "LatchkeyIdP", "LatchkeyLogging", "LatchkeyProtocol", "LatchkeyTestSupport", "LatchkeyOAuth", "LatchkeyWebAuthn", "LatchkeyCrypto",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
