import Logging

/// The reference provider's parts, by concern, over one store (docs/ARCHITECTURE.md,
/// "The provider"). Routes call these; each part runs its own transactions, and the
/// building blocks (identities, credentials, grants, outbox) take the transaction they
/// run in, so one operation can span several of them atomically.
struct Provider: Sendable {
    let context: ProviderContext
    let identities: IdentityDirectory
    let credentials: CredentialRegistry
    let grants: GrantLedger
    let outbox: Outbox
    let bindJobs: BindJobs
    let signIns: SignIns
    let tokens: TokenEndpoint
    /// RFC 7662 for resource servers, and their credentials.
    let introspection: Introspection
    let resourceServers: ResourceServers
    let transfers: Transfers
    let enrollments: Enrollments
    let administration: Administration
    /// Registered clients (RFC 6749 §2) and how each authenticates (RFC 7523).
    let clients: ClientRegistry
    let clientAuthenticator: ClientAuthenticator
    /// The device authorization grant (RFC 8628) and its approval with a passkey.
    let devices: DeviceAuthorizations
    /// The authorization challenge endpoint (draft-ietf-oauth-first-party-apps) with passkeys.
    let challenges: AuthorizationChallenges
    let attestation: AttestationActivations
    /// The SSH CA's user certificates (docs/PROTOCOL.md section 12).
    let ssh: SSHCertificateIssuance
    let sshPrincipals: SSHPrincipalGrants
    /// What a fleet of hosts knows of its people (docs/PROTOCOL.md section 14).
    let posixAccounts: POSIXAccounts
    let posixGroups: POSIXGroups
    let hostAccess: HostAccessPolicy
    let hostDirectory: HostDirectory

    init(context: ProviderContext) {
        self.context = context
        grants = GrantLedger(configuration: context.configuration, dialect: context.database.dialect, audit: context.audit)
        identities = IdentityDirectory(reserved: context.configuration.reservedUsernames)
        credentials = CredentialRegistry(grants: grants)
        outbox = Outbox()
        bindJobs = BindJobs(context: context, identities: identities, credentials: credentials, outbox: outbox)
        signIns = SignIns(context: context, credentials: credentials, grants: grants)
        clients = ClientRegistry(context: context)
        clientAuthenticator = ClientAuthenticator(context: context, registry: clients)
        devices = DeviceAuthorizations(context: context, credentials: credentials, grants: grants)
        tokens = TokenEndpoint(context: context, grants: grants, identities: identities, devices: devices)
        let tokens = tokens
        challenges = AuthorizationChallenges(context: context, signIns: signIns, credentials: credentials, grants: grants) { try tokens.dpop }
        introspection = Introspection(context: context)
        resourceServers = ResourceServers(context: context)
        transfers = Transfers(context: context, identities: identities, credentials: credentials)
        enrollments = Enrollments(context: context, identities: identities, bindJobs: bindJobs, outbox: outbox)
        attestation = AttestationActivations(context: context)
        sshPrincipals = SSHPrincipalGrants(reserved: context.configuration.reservedUsernames)
        ssh = SSHCertificateIssuance(context: context, tokens: tokens, principals: sshPrincipals)
        let ledger = POSIXIDLedger(range: context.configuration.posixIDRange)
        posixAccounts = POSIXAccounts(context: context, identities: identities, ledger: ledger)
        posixGroups = POSIXGroups(context: context, identities: identities, ledger: ledger)
        hostAccess = HostAccessPolicy(context: context, groups: posixGroups)
        hostDirectory = HostDirectory(context: context, tokens: tokens)
        administration = Administration(context: context, identities: identities, credentials: credentials, bindJobs: bindJobs, outbox: outbox)
    }
}
