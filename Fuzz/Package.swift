// swift-tools-version:6.0
import PackageDescription

// libFuzzer harnesses for every parser of outside input. Built and run by
// scripts/fuzz.sh (swift build --sanitize=fuzzer --sanitize=address); each harness is an
// executable whose LLVMFuzzerTestOneInput feeds the input to one parser and checks that it
// answers with a value or a typed error, never a crash, a leak or a hang.
let harnesses: [(name: String, dependencies: [Target.Dependency])] = [
    ("fuzz-cbor", [.product(name: "LatchkeyWebAuthn", package: "Latchkey")]),
    ("fuzz-authenticator-data", [.product(name: "LatchkeyWebAuthn", package: "Latchkey")]),
    ("fuzz-webauthn-json", [.product(name: "LatchkeyWebAuthn", package: "Latchkey")]),
    ("fuzz-jws", [.product(name: "LatchkeyOAuth", package: "Latchkey"), .product(name: "LatchkeyCrypto", package: "Latchkey")]),
    ("fuzz-jwks", [.product(name: "LatchkeyOAuth", package: "Latchkey")]),
    ("fuzz-links", [.product(name: "Latchkey", package: "Latchkey")]),
    ("fuzz-transfer-code", [.product(name: "Latchkey", package: "Latchkey"), .product(name: "LatchkeyCrypto", package: "Latchkey")]),
    ("fuzz-vault-record", [.product(name: "LatchkeyCrypto", package: "Latchkey")]),
    ("fuzz-provider-bodies", [.product(name: "LatchkeyIdP", package: "Latchkey")]),
]

let package = Package(
    name: "LatchkeyFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Latchkey", path: "..")],
    targets: harnesses.map { harness in
        .executableTarget(
            name: harness.name,
            dependencies: harness.dependencies,
            path: "Sources/\(harness.name)",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    },
    swiftLanguageModes: [.v6]
)
