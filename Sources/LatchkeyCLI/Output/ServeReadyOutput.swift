/// The line `serve --json` writes once it listens.
struct ServeReadyOutput: Encodable {
    var issuer: String
    var adminToken: String
}
