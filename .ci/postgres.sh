#!/usr/bin/env bash
# Starts a private PostgreSQL cluster for the tests: initdb into a temporary directory as
# the `postgres` user, password authentication (SCRAM) on a free loopback port, one
# database. Sourced by .ci/run, which stops it on exit (postgres_stop), failure included.
# Exports LATCHKEY_TEST_POSTGRES_URL.
#
# For the tests the cluster is thrown away after the run, so it does not sync to disk
# (fsync=off): each test's CREATE and DROP DATABASE forces a checkpoint, and with syncs one
# took 3.7 s at the start of a run, holding the disk the SQLite and vault tests sync to.
# Nothing tested relies on PostgreSQL surviving a power cut; its answers and locking are
# unchanged. The benchmark measures a durable server: POSTGRES_DURABLE=1 keeps the syncs.

postgres_bin() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [ -n "$dir" ] && [ -x "$dir/initdb" ] && echo "$dir"
}

postgres_install() {
    if [ -z "$(postgres_bin)" ]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq postgresql >/dev/null
    fi
}

postgres_start() {
    local bin port password
    bin=$(postgres_bin)
    PG_WORK=$(mktemp -d /tmp/latchkey-pg.XXXXXX)
    password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
    printf '%s\n' "$password" > "$PG_WORK/password"
    chown -R postgres "$PG_WORK"
    chmod 700 "$PG_WORK"
    local durability="-c fsync=off -c full_page_writes=off"
    if [ "${POSTGRES_DURABLE:-0}" = 1 ]; then durability=""; fi
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    su postgres -s /bin/sh -c "'$bin/initdb' -D '$PG_WORK/data' -U postgres --auth=scram-sha-256 --pwfile='$PG_WORK/password'" >/dev/null
    su postgres -s /bin/sh -c "'$bin/pg_ctl' -D '$PG_WORK/data' -l '$PG_WORK/log' -w -o \"-c listen_addresses=127.0.0.1 -p $port -k '$PG_WORK' -c max_connections=300 $durability\" start" >/dev/null
    PG_CTL="$bin/pg_ctl"
    export LATCHKEY_TEST_POSTGRES_URL="postgres://postgres:${password}@127.0.0.1:${port}/postgres?sslmode=disable"
    echo "PostgreSQL $("$bin/postgres" --version | awk '{print $3}') for the tests on 127.0.0.1:$port"
}

postgres_stop() {
    if [ -n "${PG_WORK:-}" ] && [ -d "$PG_WORK/data" ]; then
        su postgres -s /bin/sh -c "'$PG_CTL' -D '$PG_WORK/data' -m immediate stop" >/dev/null 2>&1 || true
        rm -rf "$PG_WORK"
    fi
}
