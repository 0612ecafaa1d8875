/// The reference provider's admin API (docs/PROTOCOL.md, "Admin API"), spoken by the
/// provider and by `latchkey admin`. Times are seconds since 1970.
public enum AdminAPI {}
