import Foundation
import LatchkeyCommandLine

/// The line `serve --json` writes once it listens.
struct ServeReadyOutput: Encodable {
    var issuer: String
    /// Where the admin token came from: `file`, `environment`, `credential` or `generated`.
    var adminTokenSource: String
    /// The file holding it (`--admin-token-file`, or where `serve` kept one it made).
    var adminTokenFile: String?
    /// The token itself, only when `serve` made it and stdout is a terminal.
    var adminToken: String?
    /// The admin listener's URL, with `--admin-listen`.
    var admin: String?
}

/// Tells the supervising process that `serve` listens, once, when every listener does:
/// the issuer, the admin listener (with `--admin-listen`) and where the admin token is, as
/// text or as one JSON line, unbuffered. The token itself is written only when `serve`
/// made it and stdout is a terminal (``AdminToken/Origin/shown``): a token the operator
/// supplied is theirs already, and a pipe may be a journal others read.
actor ServeReadiness {
    private let json: Bool
    /// The token, kept only when it may be shown (``AdminToken/Origin/shown``).
    private let adminToken: String?
    private let origin: AdminToken.Origin
    private let expectsAdminListener: Bool
    private var issuer: URL?
    private var admin: URL?

    init(json: Bool, adminToken: String, origin: AdminToken.Origin, expectsAdminListener: Bool) {
        self.json = json
        self.adminToken = origin == .shown ? adminToken : nil
        self.origin = origin
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

    /// The JSON `adminTokenSource`, the file, and the text line's words.
    private var told: (source: String, file: String?, text: String) {
        switch origin {
        case .file(let path): ("file", path, "from \(path) (not shown)")
        case .environment: ("environment", nil, "from $LATCHKEY_ADMIN_TOKEN (not shown)")
        case .credential: ("credential", nil, "from the systemd credential \(AdminToken.credentialName) (not shown)")
        case .kept(let path, let created): ("generated", path, created ? "generated and kept in \(path) (0600)" : "in \(path)")
        case .shown: ("generated", nil, adminToken ?? "")
        }
    }

    private func announceWhenReady() {
        guard let issuer, !expectsAdminListener || admin != nil else { return }
        let told = told
        if json {
            try? JSONOutput.printLine(ServeReadyOutput(
                issuer: issuer.absoluteString, adminTokenSource: told.source, adminTokenFile: told.file, adminToken: adminToken, admin: admin?.absoluteString
            ))
        } else {
            var lines = ["Latchkey identity provider listening", "Issuer: \(issuer.absoluteString)"]
            if let admin { lines.append("Admin: \(admin.absoluteString)") }
            lines.append("Admin token: \(told.text)")
            TextOutput.line(lines.joined(separator: "\n"))
        }
    }
}
