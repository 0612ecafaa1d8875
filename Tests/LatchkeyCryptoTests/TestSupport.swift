import Foundation
import LatchkeyOAuth
import LatchkeyTestSupport

/// Where the test data lives, found from this file's path so tests run from any
/// working directory.
enum TestData {
    /// The package root (this file is Tests/LatchkeyCryptoTests/TestSupport.swift).
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let vectors = packageRoot.appendingPathComponent("Vectors")

    /// `../shared/vectors/wycheproof` beside the checkout, or `LATCHKEY_WYCHEPROOF_DIR`.
    static let wycheproof: URL = {
        if let override = ProcessInfo.processInfo.environment["LATCHKEY_WYCHEPROOF_DIR"] {
            return URL(fileURLWithPath: override)
        }
        return packageRoot.deletingLastPathComponent().appendingPathComponent("shared/vectors/wycheproof")
    }()

    static var wycheproofAvailable: Bool {
        FileManager.default.fileExists(atPath: wycheproof.appendingPathComponent("SOURCE.md").path)
    }

    /// A JSON object from a file (Wycheproof's files run to several megabytes).
    static func json(_ url: URL) throws -> JSONValue {
        let value = try JSONValue(json: Data(contentsOf: url), maximumSize: 256 << 20)
        guard value.objectValue != nil else { throw TestDataError("\(url.lastPathComponent) is not an object") }
        return value
    }

    static func vector(_ name: String) throws -> JSONValue {
        try json(vectors.appendingPathComponent(name))
    }
}

struct TestDataError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Typed reads of a test vector's members, each failing with the member's name.
extension JSONValue {
    func string(_ key: String) throws -> String {
        guard let value = self[key]?.stringValue else { throw TestDataError("missing string \"\(key)\"") }
        return value
    }

    func int(_ key: String) throws -> Int {
        guard let value = self[key]?.intValue else { throw TestDataError("missing integer \"\(key)\"") }
        return value
    }

    func hex(_ key: String) throws -> Data {
        try Data(hex: string(key))
    }

    func object(_ key: String) throws -> JSONValue {
        guard let value = self[key], value.objectValue != nil else { throw TestDataError("missing object \"\(key)\"") }
        return value
    }

    func objects(_ key: String) throws -> [JSONValue] {
        guard let value = self[key]?.arrayValue, value.allSatisfy({ $0.objectValue != nil }) else { throw TestDataError("missing array \"\(key)\"") }
        return value
    }
}
