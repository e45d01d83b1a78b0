#!/usr/bin/env bash
# Stop the lab's PostgreSQL and remove its containers, network and data
# volume (compose down -v). The image is kept (build-image.sh reuses it).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

# Same defaults as up.sh so that Compose can interpolate the file.
export ASYNCLAB_PG_IMAGE="${ASYNCLAB_PG_IMAGE:-$ASYNCLAB_DEFAULT_PG_IMAGE}"
export ASYNCLAB_PG_PORT="${ASYNCLAB_PG_PORT:-55432}"

detect_compose
echo "down: using compose command: ${COMPOSE[*]}" >&2
compose down -v --remove-orphans >&2
