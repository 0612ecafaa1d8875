public import Foundation

/// Whether and from where the provider takes client ID metadata documents
/// (draft-ietf-oauth-client-id-metadata-document-03, as the MCP authorization spec
/// profiles it): a `client_id` that is an https URL, whose JSON describes the client.
///
/// Off unless `serve --client-metadata-documents allow`: fetching a URL a stranger names
/// is a server-side request, and an operator should choose it. Even on, the fetch reaches
/// only public addresses (``ClientMetadataDocuments``) unless ``localNetwork`` says
/// otherwise, which is for tests and a developer's own machine.
public struct ClientMetadataDocumentPolicy: Sendable {
    /// `serve --client-metadata-documents allow|deny`; deny by default.
    public var enabled = false
    /// `serve --client-metadata-host HOST` (repeatable): the only hosts whose documents are
    /// fetched, compared exactly, lower-case; empty for any host with a public address.
    public var allowedHosts: [String] = []
    /// `serve --client-metadata-local-network`: documents may be fetched from loopback and
    /// private addresses, and over plain http from a loopback host. Never in production.
    public var localNetwork = false
    /// The largest document read (the MCP spec suggests 5 KB; a key set fits in this).
    public var maximumSize = 8 * 1024
    /// The time one fetch may take, all of it.
    public var timeout: TimeInterval = 5
    /// A fetched document is kept this long at most, whatever its `Cache-Control` says,
    /// and at least ``minimumCacheLifetime`` unless it says `no-store`.
    public var maximumCacheLifetime: TimeInterval = 24 * 3600
    public var minimumCacheLifetime: TimeInterval = 60
    /// Kept when the answer names no lifetime.
    public var defaultCacheLifetime: TimeInterval = 300
    /// Documents kept per instance; the oldest goes first.
    public var maximumCachedDocuments = 1000
    /// Fetches in flight per instance; more are refused for now, not queued.
    public var maximumConcurrentFetches = 16

    public init() {}
}
