import Foundation

/// A ticket value sealed in a fixed binary layout instead of JSON (docs/PERFORMANCE.md,
/// "Less per request"): the sign-in and authorization challenge sessions are sealed and
/// opened on every sign-in, and `JSONEncoder` / `JSONDecoder` over a `Codable` with dates
/// and byte strings cost more than the AES-GCM around them.
///
/// The layout is the members in a fixed order in the SSH wire encoding, written by
/// ``TicketWriter`` and read back by ``TicketReader``; a value that does not read back whole, to its last byte, opens as
/// nothing. The layout is covered by the ticket's AES-GCM tag, so only the provider writes
/// one, but it is read as strictly as any input. A change of layout changes ``purpose``,
/// so a ticket of the old layout fails to open (its key is another) instead of misreading.
protocol TicketLayout: Sendable {
    /// The ticket's purpose: the HKDF info its key is derived with (``TicketSealer``).
    static var purpose: String { get }
    func write(to writer: inout TicketWriter)
    /// Nil when the bytes are not a value of this layout.
    init?(reading reader: inout TicketReader)
}
