#!/usr/bin/env bash
# Entrypoint of asynclab/postgres:15-debian.
#
# Implements the part of the official `postgres` image's interface that the
# lab (compose, testcontainers) relies on:
#   POSTGRES_USER (default postgres), POSTGRES_PASSWORD, POSTGRES_DB (default
#   = user), POSTGRES_HOST_AUTH_METHOD, POSTGRES_INITDB_ARGS,
#   POSTGRES_INITDB_WALDIR, the *_FILE variants of USER/PASSWORD/DB/INITDB_ARGS,
#   PGDATA (default /var/lib/postgresql/data), /docker-entrypoint-initdb.d/
#   (*.sh, *.sql, *.sql.gz), and `postgres -c ...` / `-c ...` as CMD.
#
# As in the official image, the first start runs initdb, then a temporary
# server (unix socket only) to create the database and run init scripts, then
# stops it and execs the real server. The temporary server logs to stdout and
# the real one to stderr, so "database system is ready to accept connections"
# appears twice, once on each stream: testcontainers waits for exactly that.
set -Eeo pipefail

log() { printf '%s\n' "$*"; }
err() { printf '%s\n' "$*" >&2; }

# file_env VAR [DEFAULT]: VAR from $VAR or from the file named by $VAR_FILE.
file_env() {
	local var="$1" def="${2:-}"
	local fileVar="${var}_FILE"
	if [ -n "${!var:-}" ] && [ -n "${!fileVar:-}" ]; then
		err "error: both $var and $fileVar are set (but are exclusive)"
		exit 1
	fi
	local val="$def"
	if [ -n "${!var:-}" ]; then
		val="${!var}"
	elif [ -n "${!fileVar:-}" ]; then
		val="$(< "${!fileVar}")"
	fi
	export "$var"="$val"
	unset "$fileVar"
}

setup_env() {
	file_env POSTGRES_PASSWORD
	file_env POSTGRES_USER postgres
	file_env POSTGRES_DB "$POSTGRES_USER"
	file_env POSTGRES_INITDB_ARGS
	: "${POSTGRES_HOST_AUTH_METHOD:=}"
	: "${PGDATA:=/var/lib/postgresql/data}"
	export PGDATA
	DATABASE_ALREADY_EXISTS=
	if [ -s "$PGDATA/PG_VERSION" ]; then
		DATABASE_ALREADY_EXISTS=true
	fi
}

# Run as root: make the directories usable by the postgres user.
prepare_dirs() {
	mkdir -p "$PGDATA"
	chmod 00700 "$PGDATA" || :
	find "$PGDATA" \! -user postgres -exec chown postgres '{}' +
	mkdir -p /var/run/postgresql
	chown postgres:postgres /var/run/postgresql || :
	chmod 03775 /var/run/postgresql || :
	if [ -n "${POSTGRES_INITDB_WALDIR:-}" ]; then
		mkdir -p "$POSTGRES_INITDB_WALDIR"
		find "$POSTGRES_INITDB_WALDIR" \! -user postgres -exec chown postgres '{}' +
		chmod 700 "$POSTGRES_INITDB_WALDIR"
	fi
}

verify_minimum_env() {
	if [ -z "$POSTGRES_PASSWORD" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != 'trust' ]; then
		cat >&2 <<-'EOE'
			Error: Database is uninitialized and superuser password is not specified.
			       You must specify POSTGRES_PASSWORD to a non-empty value for the
			       superuser. For example, "-e POSTGRES_PASSWORD=password" on "docker run".

			       You may also use "POSTGRES_HOST_AUTH_METHOD=trust" to allow all
			       connections without a password. This is *not* recommended.

			       See PostgreSQL documentation about "trust":
			       https://www.postgresql.org/docs/current/auth-trust.html
		EOE
		exit 1
	fi
	if [ "$POSTGRES_HOST_AUTH_METHOD" = 'trust' ]; then
		cat >&2 <<-'EOWARN'
			********************************************************************************
			WARNING: POSTGRES_HOST_AUTH_METHOD has been set to "trust". This will allow
			         anyone with access to the Postgres port to access your database without
			         a password, even if POSTGRES_PASSWORD is set.
			********************************************************************************
		EOWARN
	fi
}

init_database_dir() {
	local args=(--username="$POSTGRES_USER")
	local pwfile=
	if [ -n "$POSTGRES_PASSWORD" ]; then
		pwfile="$(mktemp)"
		chmod 600 "$pwfile"
		printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
		args+=(--pwfile="$pwfile")
	fi
	if [ -n "${POSTGRES_INITDB_WALDIR:-}" ]; then
		args+=(--waldir="$POSTGRES_INITDB_WALDIR")
	fi
	# POSTGRES_INITDB_ARGS is a shell-quoted string, as in the official image.
	eval 'initdb "${args[@]}" '"$POSTGRES_INITDB_ARGS"
	if [ -n "$pwfile" ]; then rm -f "$pwfile"; fi
}

# Append the rule for connections from other hosts (e.g. through the published
# port). Default method: the server's password_encryption (scram-sha-256).
setup_hba() {
	if [ -z "$POSTGRES_HOST_AUTH_METHOD" ]; then
		POSTGRES_HOST_AUTH_METHOD="$(postgres -C password_encryption "$@")"
	fi
	{
		echo
		if [ "$POSTGRES_HOST_AUTH_METHOD" = 'trust' ]; then
			echo '# warning trust is enabled for all connections'
		fi
		echo "host all all all $POSTGRES_HOST_AUTH_METHOD"
	} >> "$PGDATA/pg_hba.conf"
}

# psql as the superuser over the unix socket (local connections are "trust").
psql_cmd() {
	PGHOST='' PGHOSTADDR='' psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc "$@"
}

# Run SQL (stdin or -f FILE) in POSTGRES_DB; init scripts may call it as
# docker_process_sql too, as with the official image.
process_sql() {
	psql_cmd --dbname "$POSTGRES_DB" "$@"
}
docker_process_sql() { process_sql "$@"; }

# Temporary server: unix socket only, with the same -c options as the real
# one. Started without -l, so its log (including the first "ready to accept
# connections") goes to pg_ctl's stdout, as in the official image.
temp_server_start() {
	set -- "$@" -c listen_addresses='' -p "${PGPORT:-5432}"
	PGUSER="${PGUSER:-$POSTGRES_USER}" pg_ctl -D "$PGDATA" -o "$(printf '%q ' "$@")" -w start
}

temp_server_stop() {
	PGUSER="${PGUSER:-postgres}" pg_ctl -D "$PGDATA" -m fast -w stop
}

setup_db() {
	local exists
	exists="$(psql_cmd --dbname postgres --set db="$POSTGRES_DB" --tuples-only <<-'EOSQL'
		SELECT 1 FROM pg_database WHERE datname = :'db' ;
	EOSQL
	)"
	if [ -z "$exists" ]; then
		psql_cmd --dbname postgres --set db="$POSTGRES_DB" <<-'EOSQL'
			CREATE DATABASE :"db" ;
		EOSQL
		echo
	fi
}

process_init_files() {
	local f
	echo
	for f; do
		case "$f" in
			*.sh)
				if [ -x "$f" ]; then
					log "$0: running $f"
					"$f"
				else
					log "$0: sourcing $f"
					# shellcheck disable=SC1090
					. "$f"
				fi
				;;
			*.sql) log "$0: running $f"; process_sql -f "$f"; echo ;;
			*.sql.gz) log "$0: running $f"; gunzip -c "$f" | process_sql; echo ;;
			*) log "$0: ignoring $f" ;;
		esac
	done
}

# Options that only print something: no setup for those.
want_help() {
	local arg
	for arg; do
		case "$arg" in
			-'?'|--help|--describe-config|-V|--version|-C) return 0 ;;
		esac
	done
	return 1
}

main() {
	if [ "${1:0:1}" = '-' ]; then
		set -- postgres "$@"
	fi

	if [ "$1" = 'postgres' ] && ! want_help "$@"; then
		setup_env
		if [ "$(id -u)" = '0' ]; then
			prepare_dirs
			# Re-run this script as postgres (setpriv execs: no extra process).
			export HOME=/var/lib/postgresql
			exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
		fi

		if [ -z "$DATABASE_ALREADY_EXISTS" ]; then
			verify_minimum_env
			# Fail early if the init dir exists but is not readable.
			if [ -d /docker-entrypoint-initdb.d ]; then
				ls /docker-entrypoint-initdb.d/ > /dev/null
			fi
			init_database_dir
			setup_hba "${@:2}"

			export PGPASSWORD="${PGPASSWORD:-$POSTGRES_PASSWORD}"
			temp_server_start "${@:2}"
			setup_db
			shopt -s nullglob
			process_init_files /docker-entrypoint-initdb.d/*
			shopt -u nullglob
			temp_server_stop
			unset PGPASSWORD

			echo
			log 'PostgreSQL init process complete; ready for start up.'
			echo
		else
			echo
			log 'PostgreSQL Database directory appears to contain a database; Skipping initialization'
			echo
		fi
	fi

	exec "$@"
}

main "$@"
