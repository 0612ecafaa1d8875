import Foundation

/// A person about to approve or deny a device's sign-in (RFC 8628 §3.3): the device code
/// it is for and the WebAuthn challenge it was given. Like a sign-in session it travels
/// sealed (``TicketSealer``) in the decision URL, is spent once (`spent_tickets`), and
/// binds the assertion to that one device code: an assertion made for one code decides
/// no other.
struct DeviceApprovalSession: Codable, Sendable {
    var id: String
    /// SHA-256 of the device code.
    var deviceHash: Data
    /// The WebAuthn challenge (§13.4.3: random, at least 16 bytes, used once).
    var challenge: Data
    var expiresAt: Date

    static let purpose = "device approval session"
}
