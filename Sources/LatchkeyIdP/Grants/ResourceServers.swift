import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

/// Resource servers allowed to introspect tokens (RFC 7662 §2.1: the endpoint is not
/// open, or anyone could test stolen tokens against it). Each has an id and a 256-bit
/// secret made by the admin API; only the secret's SHA-256 is stored.
struct ResourceServers: Sendable {
    let context: ProviderContext

    /// Creates one; returns its id and secret (shown once).
    func create(name: String, now: Date = ProviderClock.now) async throws -> (id: String, secret: String) {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard (1...128).contains(trimmed.count), !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ProviderError.badRequest(.invalidRequest, "name must be 1 to 128 characters without control characters")
        }
        let id = "rs-" + (try ProviderContext.randomToken())
        let secret = try ProviderContext.randomToken()
        try await context.database.transaction { transaction in
            try await transaction.execute("""
                INSERT INTO resource_servers (id, name, secret_hash, created_at) VALUES (\(id), \(trimmed), \(try ProviderContext.hash(secret)), \(now))
                """)
        }
        return (id, secret)
    }

    /// Deletes one; false when there was none.
    func delete(_ id: String) async throws -> Bool {
        try await context.database.transaction { transaction in
            try await transaction.first("DELETE FROM resource_servers WHERE id = \(id) RETURNING id") != nil
        }
    }

    /// Whether `Authorization: Basic` names a resource server with its secret (RFC 6749
    /// §2.3.1 encoding: each part form-urlencoded, then base64). The hash comparison is
    /// constant-time; an unknown id costs the same hash.
    func authenticate(_ header: String?) async throws -> Bool {
        guard let header, header.count <= 1024, header.lowercased().hasPrefix("basic "),
              let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":"),
              let id = FormEncoding.unescape(text[..<colon].utf8),
              let secret = FormEncoding.unescape(text[text.index(after: colon)...].utf8)
        else { return false }
        let presented = try ProviderContext.hash(secret)
        let stored = try await context.database.read { transaction in
            try await transaction.first("SELECT secret_hash FROM resource_servers WHERE id = \(id)")?.decode("secret_hash", as: Data.self)
        }
        return ConstantTime.isEqual(stored ?? Data(count: presented.count), presented) && stored != nil
    }
}
