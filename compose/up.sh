#!/usr/bin/env bash
# Start the lab's PostgreSQL (compose service "postgres") and wait until it is
# healthy. Progress goes to stderr; stdout gets only the connection string,
# the last line being `export DATABASE_URL=...`, so `eval "$(compose/up.sh)"`
# works.
# Env: ASYNCLAB_PG_IMAGE (default asynclab/postgres:15-debian, built locally
#      by build-image.sh when missing or outdated; any other image is used as
#      given), ASYNCLAB_PG_PORT (default 55432), ASYNCLAB_PG_WAIT_TIMEOUT
#      (seconds, default 120), ASYNCLAB_COMPOSE_PROJECT (default asynclab).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

image="${ASYNCLAB_PG_IMAGE:-$ASYNCLAB_DEFAULT_PG_IMAGE}"
port="${ASYNCLAB_PG_PORT:-55432}"
timeout="${ASYNCLAB_PG_WAIT_TIMEOUT:-120}"
export ASYNCLAB_PG_IMAGE="$image" ASYNCLAB_PG_PORT="$port"

detect_compose
echo "up: using compose command: ${COMPOSE[*]}" >&2

if [[ $image == "$ASYNCLAB_DEFAULT_PG_IMAGE" ]]; then
	"$here/build-image.sh" >&2
else
	echo "up: using image $image as given (not building)" >&2
fi

if ! compose up -d --remove-orphans postgres >&2; then
	if (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then
		echo "up: error: compose up failed: 127.0.0.1:$port is already taken by another program; pick a free port with ASYNCLAB_PG_PORT=NNNN (and run down.sh to clean up)" >&2
	else
		echo "up: error: compose up failed (see above); run down.sh to clean up" >&2
	fi
	exit 1
fi
cid="$(compose ps -q postgres)"
if [[ -z $cid ]]; then
	echo "up: error: compose started no 'postgres' container" >&2
	exit 1
fi

deadline=$((SECONDS + timeout))
while :; do
	read -r state health < <(docker inspect --format '{{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "$cid")
	if [[ $health == healthy ]]; then
		break
	fi
	if [[ $state != running && $state != created && $state != restarting ]]; then
		docker logs --tail 30 "$cid" 2>&1 | sed 's/^/  | /' >&2 || true
		echo "up: error: postgres container $state (not healthy); logs: ${COMPOSE[*]} -p $ASYNCLAB_COMPOSE_PROJECT -f $ASYNCLAB_COMPOSE_FILE logs postgres" >&2
		exit 1
	fi
	if ((SECONDS >= deadline)); then
		docker logs --tail 30 "$cid" 2>&1 | sed 's/^/  | /' >&2 || true
		echo "up: error: postgres not healthy after ${timeout}s (state=$state health=$health); logs: ${COMPOSE[*]} -p $ASYNCLAB_COMPOSE_PROJECT -f $ASYNCLAB_COMPOSE_FILE logs postgres" >&2
		exit 1
	fi
	sleep 0.5
done

url="postgresql://asynclab:asynclab@127.0.0.1:${port}/asynclab"
echo "up: postgres is healthy on 127.0.0.1:${port}" >&2
echo "DATABASE_URL=$url"
echo "export DATABASE_URL=$url"
