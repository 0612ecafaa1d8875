import Foundation

/// The store's schema, in numbered steps (docs/ARCHITECTURE.md, "The store"). `serve`
/// applies the steps a database lacks when it starts, each in its own transaction, and
/// refuses a database whose schema is newer than this build knows: an older binary
/// writing rows it does not understand would lose what the newer one keeps in them.
///
/// Both engines take the same DDL but for three spellings: `{BLOB}` (SQLite `BLOB`,
/// PostgreSQL `BYTEA`), `{SERIAL}` (an auto-numbered key) and nothing else. Times are
/// BIGINT milliseconds since 1970 and booleans BIGINT 0 or 1, so one statement binds
/// them alike in both.
enum Migrations {
    static let steps: [String] = [
        // 1: identities, credentials, bind jobs, sign-ins, grants, transfers, enrollment, outbox.
        """
        CREATE TABLE identities (
            id TEXT PRIMARY KEY,
            username TEXT NOT NULL,
            username_key TEXT NOT NULL UNIQUE,
            username_skeleton TEXT NOT NULL UNIQUE,
            email TEXT,
            display_name TEXT NOT NULL,
            created_at BIGINT NOT NULL
        );
        CREATE INDEX identities_created ON identities (created_at, id);
        CREATE TABLE credentials (
            id {BLOB} PRIMARY KEY,
            identity_id TEXT NOT NULL REFERENCES identities (id) ON DELETE CASCADE,
            public_key {BLOB} NOT NULL,
            sign_count BIGINT NOT NULL,
            backup_eligible BIGINT NOT NULL,
            backup_state BIGINT NOT NULL,
            user_verified BIGINT NOT NULL,
            attestation_format TEXT NOT NULL,
            aaguid {BLOB} NOT NULL,
            transports TEXT NOT NULL,
            revoked_at BIGINT,
            created_at BIGINT NOT NULL,
            last_used_at BIGINT
        );
        CREATE INDEX credentials_identity ON credentials (identity_id);
        CREATE TABLE bind_jobs (
            id TEXT PRIMARY KEY,
            token_hash {BLOB} NOT NULL,
            identity_id TEXT NOT NULL REFERENCES identities (id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            expires_at BIGINT NOT NULL,
            post_binding_redirect_uri TEXT,
            challenge {BLOB},
            used BIGINT NOT NULL DEFAULT 0,
            email_code_hash {BLOB},
            code_verified BIGINT NOT NULL DEFAULT 0,
            failed_code_attempts BIGINT NOT NULL DEFAULT 0,
            terms_accepted BIGINT NOT NULL DEFAULT 0,
            require_email_code BIGINT NOT NULL DEFAULT 0
        );
        CREATE INDEX bind_jobs_identity ON bind_jobs (identity_id);
        CREATE INDEX bind_jobs_expiry ON bind_jobs (expires_at);
        CREATE TABLE sign_in_sessions (
            id_hash {BLOB} PRIMARY KEY,
            client_id TEXT NOT NULL,
            redirect_uri TEXT NOT NULL,
            state TEXT,
            nonce TEXT,
            code_challenge TEXT NOT NULL,
            scope TEXT NOT NULL,
            challenge {BLOB} NOT NULL,
            allowed_credentials TEXT NOT NULL,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX sign_in_sessions_expiry ON sign_in_sessions (expires_at);
        CREATE TABLE grant_families (
            id TEXT PRIMARY KEY,
            identity_id TEXT NOT NULL REFERENCES identities (id) ON DELETE CASCADE,
            credential_id {BLOB} NOT NULL,
            client_id TEXT NOT NULL,
            scope TEXT NOT NULL,
            auth_time BIGINT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            revoked_at BIGINT
        );
        CREATE INDEX grant_families_credential ON grant_families (credential_id);
        CREATE INDEX grant_families_owner ON grant_families (identity_id, client_id, created_at);
        CREATE INDEX grant_families_expiry ON grant_families (expires_at);
        CREATE TABLE authorization_codes (
            code_hash {BLOB} PRIMARY KEY,
            family_id TEXT NOT NULL REFERENCES grant_families (id) ON DELETE CASCADE,
            redirect_uri TEXT NOT NULL,
            code_challenge TEXT NOT NULL,
            nonce TEXT,
            expires_at BIGINT NOT NULL,
            used BIGINT NOT NULL DEFAULT 0
        );
        CREATE INDEX authorization_codes_family ON authorization_codes (family_id);
        CREATE INDEX authorization_codes_expiry ON authorization_codes (expires_at);
        CREATE TABLE tokens (
            hash {BLOB} PRIMARY KEY,
            family_id TEXT NOT NULL REFERENCES grant_families (id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            expires_at BIGINT NOT NULL,
            rotated_at BIGINT
        );
        CREATE INDEX tokens_family ON tokens (family_id);
        CREATE INDEX tokens_expiry ON tokens (expires_at);
        CREATE TABLE transfers (
            id TEXT PRIMARY KEY,
            identity_id TEXT NOT NULL REFERENCES identities (id) ON DELETE CASCADE,
            exporter_credential_id {BLOB} NOT NULL,
            state TEXT NOT NULL,
            expires_at BIGINT NOT NULL,
            ended_at BIGINT,
            open_challenge {BLOB},
            exporter_token_hash {BLOB},
            code_prefix TEXT UNIQUE,
            code_secret_hash {BLOB},
            code_expires_at BIGINT NOT NULL DEFAULT 0,
            code TEXT,
            failed_attempts BIGINT NOT NULL DEFAULT 0,
            importer_token_hash {BLOB},
            registration_challenge {BLOB},
            pending_import TEXT,
            bound_credential_id {BLOB}
        );
        CREATE INDEX transfers_expiry ON transfers (expires_at);
        CREATE TABLE enrollments (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            token_hash {BLOB} NOT NULL,
            username TEXT NOT NULL,
            identity_id TEXT,
            profile TEXT,
            username_taken BIGINT NOT NULL DEFAULT 0,
            code_hash {BLOB},
            code_expires_at BIGINT NOT NULL DEFAULT 0,
            failed_attempts BIGINT NOT NULL DEFAULT 0,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX enrollments_expiry ON enrollments (expires_at);
        CREATE TABLE attempt_counters (
            key TEXT PRIMARY KEY,
            window_start BIGINT NOT NULL,
            count BIGINT NOT NULL
        );
        CREATE INDEX attempt_counters_window ON attempt_counters (window_start);
        CREATE TABLE outbox (
            id {SERIAL},
            recipient TEXT NOT NULL,
            subject TEXT NOT NULL,
            body TEXT NOT NULL,
            code TEXT,
            created_at BIGINT NOT NULL
        );
        CREATE TABLE signing_keys (
            kid TEXT PRIMARY KEY,
            algorithm TEXT NOT NULL,
            sealed_private_key {BLOB} NOT NULL,
            created_at BIGINT NOT NULL,
            signs_from BIGINT NOT NULL,
            published_until BIGINT
        );
        CREATE TABLE provider_secrets (
            name TEXT PRIMARY KEY,
            sealed_value {BLOB} NOT NULL
        );
        """,
        // 2: limits nobody can turn against others (docs/SECURITY.md, "Limits"). Sign-in
        // sessions travel sealed to the client and are recorded only when spent; e-mailed
        // codes belong to their target (an account, an address), shared by its flows.
        // Settings the store records about itself (the username skeleton rule). The
        // outbox becomes a delivery queue (attempts, the next one, the outcome).
        """
        DROP TABLE sign_in_sessions;
        CREATE TABLE spent_tickets (
            id_hash {BLOB} PRIMARY KEY,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX spent_tickets_expiry ON spent_tickets (expires_at);
        CREATE TABLE mailed_codes (
            target TEXT PRIMARY KEY,
            short_hash {BLOB} NOT NULL,
            long_hash {BLOB} NOT NULL,
            mailed_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX mailed_codes_expiry ON mailed_codes (expires_at);
        ALTER TABLE enrollments DROP COLUMN code_hash;
        ALTER TABLE enrollments DROP COLUMN code_expires_at;
        CREATE TABLE provider_settings (
            name TEXT PRIMARY KEY,
            value TEXT NOT NULL
        );
        ALTER TABLE outbox ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;
        ALTER TABLE outbox ADD COLUMN next_attempt_at BIGINT NOT NULL DEFAULT 0;
        ALTER TABLE outbox ADD COLUMN delivered_at BIGINT;
        ALTER TABLE outbox ADD COLUMN failed_at BIGINT
        """,
        // 3: DPoP (RFC 9449): the key a grant family's tokens are bound to, and the proofs
        // seen, kept for their acceptance window.
        """
        ALTER TABLE grant_families ADD COLUMN dpop_jkt TEXT;
        CREATE TABLE dpop_proofs (
            id_hash {BLOB} PRIMARY KEY,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX dpop_proofs_expiry ON dpop_proofs (expires_at)
        """,
        // 4: resource servers that may introspect tokens (RFC 7662), by a hashed secret.
        """
        CREATE TABLE resource_servers (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            secret_hash {BLOB} NOT NULL,
            created_at BIGINT NOT NULL
        )
        """,
        // 5: registered clients (RFC 6749 §2), each public or keyed for private_key_jwt
        // (RFC 7523); the assertions' jti seen, kept until their exp; client credentials
        // tokens (RFC 6749 §4.4), which have no person and so no grant family.
        """
        CREATE TABLE clients (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            jwks TEXT,
            grant_types TEXT NOT NULL,
            redirect_uris TEXT NOT NULL,
            scopes TEXT NOT NULL,
            created_at BIGINT NOT NULL
        );
        CREATE TABLE client_assertions (
            id_hash {BLOB} PRIMARY KEY,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX client_assertions_expiry ON client_assertions (expires_at);
        CREATE TABLE client_tokens (
            hash {BLOB} PRIMARY KEY,
            client_id TEXT NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
            scope TEXT NOT NULL,
            dpop_jkt TEXT,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL
        );
        CREATE INDEX client_tokens_client ON client_tokens (client_id);
        CREATE INDEX client_tokens_expiry ON client_tokens (expires_at)
        """,
        // 6: the device authorization grant (RFC 8628): one row per device code (kept as
        // its hash), its user code (unique while it lives), who asked from where, and how
        // it ended; an approval starts a grant family that the device's poll draws on.
        """
        CREATE TABLE device_codes (
            device_hash {BLOB} PRIMARY KEY,
            user_code TEXT NOT NULL UNIQUE,
            client_id TEXT NOT NULL,
            scope TEXT NOT NULL,
            requester TEXT NOT NULL,
            requester_key TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            interval_seconds BIGINT NOT NULL,
            polled_at BIGINT,
            status TEXT NOT NULL,
            family_id TEXT
        );
        CREATE INDEX device_codes_expiry ON device_codes (expires_at);
        CREATE INDEX device_codes_client ON device_codes (client_id);
        CREATE INDEX device_codes_requester ON device_codes (requester_key)
        """,
        // 7: where a credential was registered: `client` (a Latchkey client, or any
        // client of the JSON API) or `browser` (the registration page), so the admin
        // listing tells a person's device keys from their browser passkeys.
        """
        ALTER TABLE credentials ADD COLUMN registered_from TEXT NOT NULL DEFAULT 'client'
        """,
        // 8: an identity may demand attestation of every credential registered for it
        // (`admin create-identity --require-attestation tpm`); NULL demands none.
        """
        ALTER TABLE identities ADD COLUMN require_attestation TEXT
        """,
        // 9: a registered client's registration (random, new each time an id is
        // registered), stamped on the grant families begun for it, so an id that is
        // deleted and registered again inherits nothing begun for the old client
        // (docs/SECURITY.md, "Client keys"); NULL: a configured client, or a family from
        // before this step. And the network a device code was asked from (an IPv4 /24, an
        // IPv6 /48), which a full pool of live codes gives way by ("Device sign-in").
        """
        ALTER TABLE clients ADD COLUMN registration TEXT;
        ALTER TABLE grant_families ADD COLUMN client_registration TEXT;
        ALTER TABLE device_codes ADD COLUMN requester_network TEXT;
        CREATE INDEX device_codes_client_network ON device_codes (client_id, requester_network)
        """,
        // 10: the audit log (docs/ARCHITECTURE.md, "The audit log"): one row per decision,
        // written with it (`seq` and `chain_hash` empty until the sealer gives the row its
        // place in the chain), its authentication code under the sealed audit key; the
        // chain's signed head, and the checkpoints kept for retention to prune to.
        """
        CREATE TABLE audit_events (
            id {SERIAL},
            seq BIGINT UNIQUE,
            chain_hash {BLOB},
            occurred_at BIGINT NOT NULL,
            event_type TEXT NOT NULL,
            outcome TEXT NOT NULL,
            error TEXT,
            actor_kind TEXT NOT NULL,
            actor_id TEXT,
            subject TEXT,
            client TEXT,
            address TEXT,
            user_agent TEXT,
            details TEXT,
            mac {BLOB} NOT NULL
        );
        CREATE INDEX audit_events_waiting ON audit_events (id) WHERE seq IS NULL;
        CREATE INDEX audit_events_subject ON audit_events (subject, seq);
        CREATE INDEX audit_events_type ON audit_events (event_type, seq);
        CREATE TABLE audit_head (
            singleton BIGINT PRIMARY KEY,
            seq BIGINT NOT NULL,
            chain_hash {BLOB} NOT NULL,
            signature TEXT NOT NULL,
            updated_at BIGINT NOT NULL
        );
        CREATE TABLE audit_checkpoints (
            seq BIGINT PRIMARY KEY,
            chain_hash {BLOB} NOT NULL,
            signature TEXT NOT NULL,
            created_at BIGINT NOT NULL
        )
        """,
        // 11: events wait for the sealer in a table of their own, keyed by its id and
        // nothing else, so a decision's event costs one row on one page; the sealer moves
        // them into audit_events with their place in the chain, whose indexes it then
        // updates once a batch (docs/PERFORMANCE.md, "The audit log").
        """
        CREATE TABLE audit_pending (
            id {QUEUE_ID},
            occurred_at BIGINT NOT NULL,
            event_type TEXT NOT NULL,
            outcome TEXT NOT NULL,
            error TEXT,
            actor_kind TEXT NOT NULL,
            actor_id TEXT,
            subject TEXT,
            client TEXT,
            address TEXT,
            user_agent TEXT,
            details TEXT,
            mac {BLOB} NOT NULL
        );
        INSERT INTO audit_pending (occurred_at, event_type, outcome, error, actor_kind, actor_id, subject, client, address, user_agent, details, mac)
            SELECT occurred_at, event_type, outcome, error, actor_kind, actor_id, subject, client, address, user_agent, details, mac
            FROM audit_events WHERE seq IS NULL ORDER BY id;
        DELETE FROM audit_events WHERE seq IS NULL;
        DROP INDEX audit_events_waiting
        """,
        // 12: the SSH CA (docs/PROTOCOL.md section 12): every certificate issued (its
        // serial, for the KRL; the identity and credential it was issued on, so revoking
        // either revokes it), who first had each key certified (a key is never certified
        // for two identities), and the principals an admin granted beyond the username.
        """
        CREATE TABLE ssh_certificates (
            serial BIGINT PRIMARY KEY,
            identity_id TEXT NOT NULL,
            credential_id {BLOB} NOT NULL,
            client_id TEXT NOT NULL,
            key_fingerprint TEXT NOT NULL,
            principals TEXT NOT NULL,
            valid_after BIGINT NOT NULL,
            valid_before BIGINT NOT NULL,
            issued_at BIGINT NOT NULL
        );
        CREATE INDEX ssh_certificates_valid ON ssh_certificates (valid_before);
        CREATE INDEX ssh_certificates_identity ON ssh_certificates (identity_id, valid_before);
        CREATE TABLE ssh_key_holders (
            key_fingerprint TEXT PRIMARY KEY,
            identity_id TEXT NOT NULL,
            first_certified_at BIGINT NOT NULL
        );
        CREATE TABLE ssh_principals (
            identity_id TEXT NOT NULL,
            principal TEXT NOT NULL,
            PRIMARY KEY (identity_id, principal)
        )
        """,
        // 13: certificates for clients themselves (client credentials, RFC 6749 §4.4):
        // a certificate or a key's holder is an identity or a client, so the identity and
        // credential columns may be empty; a client's certificate records the client's
        // registration, so deleting the client (and registering its id again) puts it on
        // the KRL; and the principals an admin granted a client. Both tables are rebuilt,
        // since SQLite cannot drop a NOT NULL; every row is kept.
        """
        CREATE TABLE ssh_certificates_13 (
            serial BIGINT PRIMARY KEY,
            identity_id TEXT,
            credential_id {BLOB},
            client_id TEXT NOT NULL,
            client_registration TEXT,
            key_fingerprint TEXT NOT NULL,
            principals TEXT NOT NULL,
            valid_after BIGINT NOT NULL,
            valid_before BIGINT NOT NULL,
            issued_at BIGINT NOT NULL
        );
        INSERT INTO ssh_certificates_13 (serial, identity_id, credential_id, client_id, key_fingerprint, principals, valid_after, valid_before, issued_at)
            SELECT serial, identity_id, credential_id, client_id, key_fingerprint, principals, valid_after, valid_before, issued_at FROM ssh_certificates;
        DROP TABLE ssh_certificates;
        ALTER TABLE ssh_certificates_13 RENAME TO ssh_certificates;
        CREATE INDEX ssh_certificates_valid ON ssh_certificates (valid_before);
        CREATE INDEX ssh_certificates_identity ON ssh_certificates (identity_id, valid_before);
        CREATE TABLE ssh_key_holders_13 (
            key_fingerprint TEXT PRIMARY KEY,
            identity_id TEXT,
            client_id TEXT,
            first_certified_at BIGINT NOT NULL
        );
        INSERT INTO ssh_key_holders_13 (key_fingerprint, identity_id, first_certified_at)
            SELECT key_fingerprint, identity_id, first_certified_at FROM ssh_key_holders;
        DROP TABLE ssh_key_holders;
        ALTER TABLE ssh_key_holders_13 RENAME TO ssh_key_holders;
        CREATE TABLE ssh_client_principals (
            client_id TEXT NOT NULL,
            principal TEXT NOT NULL,
            PRIMARY KEY (client_id, principal)
        )
        """,
        // 14: what a host asks a person to approve (docs/PROTOCOL.md section 13): the
        // `latchkey_pam_login` authorization detail (RFC 9396) of its device code, shown
        // to the approver; NULL for an ordinary device sign-in.
        """
        ALTER TABLE device_codes ADD COLUMN host_login TEXT
        """,
        // 15: a sign-in caps the identity's live grants for the client
        // (`GrantLedger.limitFamilies`): the owner index served that by walking every
        // family the identity ever had for the client, revoked ones too, and reading each
        // row. With the revocation time and the columns the cap reads in the index, the
        // walk covers the live families only and never leaves the index; its prefix still
        // serves lookups and cascades by identity (docs/PERFORMANCE.md, "Less per request").
        """
        DROP INDEX IF EXISTS grant_families_owner;
        CREATE INDEX IF NOT EXISTS grant_families_live ON grant_families (identity_id, client_id, revoked_at, created_at, expires_at, id)
        """,
        // 16: each audit event carries a random nonce its authentication code and its link
        // cover, unique among sealed events: a sealed row copied back into the waiting
        // table, code and all, is one the sealer has seen, and it is discarded instead of
        // being sealed again as a new event (docs/SECURITY.md, "Audit log"). Rows from
        // before have none, and keep their first canonical form.
        """
        ALTER TABLE audit_pending ADD COLUMN nonce {BLOB};
        ALTER TABLE audit_events ADD COLUMN nonce {BLOB};
        CREATE UNIQUE INDEX audit_events_nonce ON audit_events (nonce)
        """,
        // 17: the SSH CA's keys and their rotation (docs/PROTOCOL.md section 12): which
        // sealed key signs (`current`), which waits to (`next`), which were retired and
        // when (`previous`); and the key each certificate was signed by, for the KRL's
        // sections per CA key (NULL: the first key, the only one before this step).
        """
        CREATE TABLE ssh_ca_keys (
            name TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            public_key TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            activated_at BIGINT,
            retired_at BIGINT
        );
        CREATE UNIQUE INDEX ssh_ca_keys_one_current ON ssh_ca_keys (state) WHERE state <> 'previous';
        ALTER TABLE ssh_certificates ADD COLUMN ca_key TEXT
        """,
        // 18: what a fleet of hosts knows of its people (docs/PROTOCOL.md section 14):
        // every POSIX ID ever handed out, kept for good so none is handed out twice; the
        // identities' POSIX accounts; named groups and their members; the hosts' labels
        // (a host is a registered client) and which groups may log in, and use sudo, on
        // a label's hosts; and the version hosts compare to know nothing changed.
        """
        CREATE TABLE posix_ids (
            id BIGINT PRIMARY KEY,
            kind TEXT NOT NULL,
            owner TEXT NOT NULL,
            allocated_at BIGINT NOT NULL
        );
        CREATE INDEX posix_ids_owner ON posix_ids (owner, kind);
        CREATE TABLE posix_accounts (
            identity_id TEXT PRIMARY KEY,
            uid BIGINT NOT NULL UNIQUE,
            home TEXT NOT NULL,
            shell TEXT NOT NULL,
            gecos TEXT,
            changed_at BIGINT NOT NULL
        );
        CREATE TABLE posix_groups (
            gid BIGINT PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            created_at BIGINT NOT NULL
        );
        CREATE TABLE posix_group_members (
            gid BIGINT NOT NULL,
            identity_id TEXT NOT NULL,
            PRIMARY KEY (gid, identity_id)
        );
        CREATE INDEX posix_group_members_identity ON posix_group_members (identity_id);
        CREATE TABLE host_labels (
            client_id TEXT NOT NULL,
            label TEXT NOT NULL,
            PRIMARY KEY (client_id, label)
        );
        CREATE TABLE host_access (
            label TEXT NOT NULL,
            gid BIGINT NOT NULL,
            sudo BIGINT NOT NULL,
            PRIMARY KEY (label, gid)
        );
        CREATE INDEX host_access_group ON host_access (gid);
        CREATE TABLE host_directory_version (version BIGINT NOT NULL);
        INSERT INTO host_directory_version (version) VALUES (1)
        """,
        // 19: resource indicators (RFC 8707): a resource server's resource URI (its tokens'
        // audience, one server each); the resource a grant family, a client credentials
        // token and a device code were asked for (NULL: the provider's own resources); the
        // resources a registered client may ask for (space-separated; NULL: any registered).
        """
        ALTER TABLE resource_servers ADD COLUMN resource TEXT;
        CREATE UNIQUE INDEX resource_servers_resource ON resource_servers (resource);
        ALTER TABLE grant_families ADD COLUMN resource TEXT;
        ALTER TABLE client_tokens ADD COLUMN resource TEXT;
        ALTER TABLE device_codes ADD COLUMN resource TEXT;
        ALTER TABLE clients ADD COLUMN resources TEXT
        """,
        // 20: the access tokens a resource server takes: NULL for opaque ones it
        // introspects, 'jwt' for JWT access tokens (RFC 9068) it checks offline.
        """
        ALTER TABLE resource_servers ADD COLUMN access_token_format TEXT
        """,
        // 21: consent to third-party clients, remembered per identity, client and resource
        // ('' for none): the scopes consented to; a request within them asks no more.
        """
        CREATE TABLE consents (
            identity_id TEXT NOT NULL,
            client_id TEXT NOT NULL,
            resource TEXT NOT NULL,
            scope TEXT NOT NULL,
            granted_at BIGINT NOT NULL,
            PRIMARY KEY (identity_id, client_id, resource)
        )
        """,
        // 22: dynamically registered clients (RFC 7591): third-party (they get the consent
        // page), their registration access token's hash (RFC 7592), their application type.
        """
        ALTER TABLE clients ADD COLUMN third_party BIGINT NOT NULL DEFAULT 0;
        ALTER TABLE clients ADD COLUMN registration_token_hash {BLOB};
        ALTER TABLE clients ADD COLUMN application_type TEXT
        """,
    ]

    /// The PostgreSQL advisory lock that keeps instances from migrating at once.
    static let lockKey = Int64(0x4C61_7463_686B_6579)

    /// The newest schema this build knows.
    static var currentVersion: Int { steps.count }

    static func ddl(_ text: String, _ dialect: SQLDialect) -> [String] {
        let spelled: String
        switch dialect {
        case .sqlite:
            // A queue's id is the rowid alone: one more than the largest in the table, so
            // increasing among the rows it holds, without AUTOINCREMENT's write to
            // sqlite_sequence on every insert.
            spelled = text.replacingOccurrences(of: "{BLOB}", with: "BLOB")
                .replacingOccurrences(of: "{SERIAL}", with: "INTEGER PRIMARY KEY AUTOINCREMENT")
                .replacingOccurrences(of: "{QUEUE_ID}", with: "INTEGER PRIMARY KEY")
        case .postgres:
            spelled = text.replacingOccurrences(of: "{BLOB}", with: "BYTEA")
                .replacingOccurrences(of: "{SERIAL}", with: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
                .replacingOccurrences(of: "{QUEUE_ID}", with: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
        }
        return spelled.split(separator: ";").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    /// Brings `database` to ``currentVersion``, every missing step in one transaction:
    /// DDL is transactional on both engines, so a start that dies midway leaves the
    /// schema as it was, and a new store costs one durable commit, not one a step.
    /// Instances starting at once take turns (``ProviderDatabase/exclusiveTransaction(lock:_:)``):
    /// the second sees the first's schema and has nothing to do.
    static func run(on database: any ProviderDatabase) async throws {
        let dialect = database.dialect
        try await database.exclusiveTransaction(lock: lockKey) { transaction in
            try await transaction.execute("CREATE TABLE IF NOT EXISTS latchkey_schema (version BIGINT NOT NULL)")
            let found = try await transaction.first("SELECT version FROM latchkey_schema")?.decode("version", as: Int64.self)
            let version = found ?? 0
            guard version <= currentVersion else {
                throw StoreError.schemaTooNew("the database has schema version \(version); this build of Latchkey knows up to \(currentVersion). Run a newer latchkey, or restore a backup made for this one")
            }
            guard version < currentVersion else { return }
            for step in steps[Int(version)...] {
                for statement in ddl(step, dialect) {
                    try await transaction.execute(SQLStatement(stringLiteral: statement))
                }
            }
            if found == nil {
                try await transaction.execute("INSERT INTO latchkey_schema (version) VALUES (\(Int64(currentVersion)))")
            } else {
                try await transaction.execute("UPDATE latchkey_schema SET version = \(Int64(currentVersion))")
            }
        }
    }
}
