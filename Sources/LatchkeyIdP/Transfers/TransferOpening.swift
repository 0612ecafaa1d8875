import Foundation

/// A transfer's first step, before the exporter has proved possession of its credential
/// (docs/PROTOCOL.md section 5). Anyone who knows a credential ID can get this far, so it
/// is not stored: it travels sealed (``TicketSealer``) in the open URL, and the transfer
/// is created only by a valid assertion (docs/SECURITY.md, "Limits").
struct TransferOpening: Codable, Sendable {
    /// The transfer's id to be; also the ticket's single-use id.
    var id: String
    var credentialID: Data
    var challenge: Data
    var expiresAt: Date

    static let purpose = "transfer opening"
}
