#!/usr/bin/env bash
# Build asynclab/dind:<hash>, a Docker engine in a container (compose/dind/Dockerfile), on top
# of asynclab/postgres:15-debian (build-image.sh builds it first when needed). The tag holds a
# hash of the Dockerfile and the base image's id, so an unchanged image is reused. Prints the
# tag on stdout; progress on stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly BASE=asynclab/postgres:15-debian

"$here/build-image.sh" >&2
base_id="$(docker image inspect --format '{{.Id}}' "$BASE")"
hash="$({ cat "$here/dind/Dockerfile"; echo "$base_id"; } | sha256sum | cut -c1-12)"
tag="asynclab/dind:$hash"
if docker image inspect "$tag" > /dev/null 2>&1; then
	echo "build-dind-image: $tag is up to date" >&2
else
	if ! docker buildx version > /dev/null 2>&1; then
		export DOCKER_BUILDKIT=0
	fi
	echo "build-dind-image: docker build -> $tag" >&2
	docker build --quiet --build-arg "BASE_IMAGE=$BASE" -t "$tag" "$here/dind" > /dev/null
	# Older tags of the same image are dead weight now.
	docker image ls --format '{{.Repository}}:{{.Tag}}' asynclab/dind |
		grep -vxF "$tag" | xargs -r docker rmi > /dev/null 2>&1 || true
fi
echo "$tag"
