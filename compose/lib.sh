# shellcheck shell=bash
# Shared by up.sh and down.sh (sourced, not run).

# shellcheck disable=SC2034 # used by the scripts that source this file
ASYNCLAB_DEFAULT_PG_IMAGE=asynclab/postgres:15-debian
ASYNCLAB_COMPOSE_PROJECT="${ASYNCLAB_COMPOSE_PROJECT:-asynclab}"
ASYNCLAB_COMPOSE_FILE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/docker-compose.yml"

# Sets the array COMPOSE to the Compose command found: the v2 plugin
# (`docker compose`) if it works, else the standalone `docker-compose`
# (v1 from Debian bookworm, or a v2 binary).
detect_compose() {
	if docker compose version > /dev/null 2>&1; then
		COMPOSE=(docker compose)
	elif command -v docker-compose > /dev/null 2>&1; then
		COMPOSE=(docker-compose)
	else
		echo "error: neither 'docker compose' nor 'docker-compose' is installed" >&2
		return 1
	fi
}

# compose ARGS...: run Compose on this folder's file and project.
compose() {
	"${COMPOSE[@]}" -p "$ASYNCLAB_COMPOSE_PROJECT" -f "$ASYNCLAB_COMPOSE_FILE" "$@"
}
