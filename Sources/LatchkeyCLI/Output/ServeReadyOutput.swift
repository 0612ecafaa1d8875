import Foundation

/// The line `serve --json` writes once it listens.
struct ServeReadyOutput: Encodable {
    var issuer: String
    var adminToken: String
    /// The admin listener's URL, with `--admin-listen`.
    var admin: String?
}

/// Tells the supervising process that `serve` listens, once, when every listener does:
/// the issuer, the admin listener (with `--admin-listen`) and the admin token, as text or
/// as one JSON line, unbuffered.
actor ServeReadiness {
    private let json: Bool
    private let adminToken: String
    private let expectsAdminListener: Bool
    private var issuer: URL?
    private var admin: URL?

    init(json: Bool, adminToken: String, expectsAdminListener: Bool) {
        self.json = json
        self.adminToken = adminToken
        self.expectsAdminListener = expectsAdminListener
    }

    func listening(issuer: URL) {
        self.issuer = issuer
        announceWhenReady()
    }

    func listening(admin: URL) {
        self.admin = admin
        announceWhenReady()
    }

    private func announceWhenReady() {
        guard let issuer, !expectsAdminListener || admin != nil else { return }
        if json {
            try? JSONOutput.printLine(ServeReadyOutput(issuer: issuer.absoluteString, adminToken: adminToken, admin: admin?.absoluteString))
        } else {
            var lines = ["Latchkey identity provider listening", "Issuer: \(issuer.absoluteString)"]
            if let admin { lines.append("Admin: \(admin.absoluteString)") }
            lines.append("Admin token: \(adminToken)")
            TextOutput.line(lines.joined(separator: "\n"))
        }
    }
}
