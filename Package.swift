// swift-tools-version:6.0
import PackageDescription

// Every Swift target builds in Swift 6 mode (complete strict concurrency) with
// internal imports by default, so no module leaks its dependencies through its API.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Latchkey",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "LatchkeyCrypto", targets: ["LatchkeyCrypto"]),
        .library(name: "LatchkeyWebAuthn", targets: ["LatchkeyWebAuthn"]),
        .executable(name: "latchkey-bench", targets: ["latchkey-bench"]),
    ],
    targets: [
        // libcrypto from Debian's libssl-dev; the header pins the OpenSSL 3 API.
        .systemLibrary(
            name: "CLatchkeyOpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "LatchkeyCrypto",
            dependencies: ["CLatchkeyOpenSSL"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "LatchkeyWebAuthn",
            dependencies: ["LatchkeyCrypto"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "latchkey-bench",
            dependencies: ["LatchkeyCrypto", "LatchkeyWebAuthn"],
            swiftSettings: strictSettings
        ),
        // A vault writer the crash test starts and SIGKILLs (a dependency of the tests so
        // `swift test` builds it).
        .executableTarget(
            name: "latchkey-vault-stress",
            dependencies: ["LatchkeyCrypto"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LatchkeyCryptoTests",
            dependencies: ["LatchkeyCrypto", "latchkey-vault-stress"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "LatchkeyWebAuthnTests",
            dependencies: ["LatchkeyWebAuthn", "LatchkeyCrypto"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
