/// Which sign-in protocol ``Embedded`` speaks to a provider.
public enum SignInFlow: String, Sendable, CaseIterable {
    /// The authorization challenge endpoint when discovery names one, the redirect flow
    /// otherwise.
    case automatic
    /// Only the authorization challenge endpoint (draft-ietf-oauth-first-party-apps;
    /// docs/PROTOCOL.md section 8): no redirect at all.
    case challenge
    /// Only the redirect flow: `/authorize`, the authenticate URL, a redirect with the code
    /// (docs/PROTOCOL.md section 3).
    case redirect
}
