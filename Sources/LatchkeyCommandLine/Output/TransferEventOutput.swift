/// One line of `export --json`: an event of the transfer, with what it carries.
struct TransferEventOutput: Encodable {
    var event: String
    var code: String?
    var expiresAt: String?
    var deviceName: String?
    var fingerprint: String?
}
