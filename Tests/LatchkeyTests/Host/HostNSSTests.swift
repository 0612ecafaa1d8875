import Testing

/// The suites that serve accounts to this host's NSS. A host has one NSS, and
/// nss-systemd asks every socket under /run/systemd/userdb, so two daemons of two tests
/// would both answer for `alice`: these suites run one test at a time, nested here.
@Suite("latchkey host through the host's own NSS", .serialized)
struct HostNSSTests {}
