#!/usr/bin/env bash
# Build asynclab/postgres:15-debian from Debian's own packages, without any
# container registry:
#   1. debootstrap --variant=minbase <suite> into compose/.cache, apt-get
#      install postgresql-15 in a chroot, tar it (cached: rootfs-<key>.tar);
#   2. docker import that tarball as asynclab/postgres-base:<key>;
#   3. docker build compose/Dockerfile FROM it (adds docker-entrypoint.sh).
# Debian bookworm ships PostgreSQL 15, hence the tag.
#
# The result is reused while its inputs do not change: a hash of this script,
# docker-entrypoint.sh, Dockerfile, the suite and PG major is stored in the
# image label asynclab.build-hash; if the image already carries it, this exits
# at once. The rootfs tarball is keyed on the rootfs recipe only, so changing
# the entrypoint or the Dockerfile does not redo debootstrap.
#
# Usage: build-image.sh [--force]
# Env:   ASYNCLAB_DEBIAN_MIRROR / ASYNCLAB_DEBIAN_SECURITY_MIRROR (default: read
#        from the host's /etc/apt/sources.list{,.d/*}), ASYNCLAB_CACHE_DIR
#        (default compose/.cache), ASYNCLAB_FORCE_REBUILD=1 (same as --force).
# Needs root only when the rootfs must be (re)built (debootstrap, chroot).
set -euo pipefail

readonly SUITE=bookworm
readonly PG_MAJOR=15
readonly IMAGE=asynclab/postgres:15-debian
readonly BASE_REPO=asynclab/postgres-base
readonly LABEL=asynclab.build-hash
readonly ROOTFS_LABEL=asynclab.rootfs-key
# What the rootfs gets on top of minbase (dependencies come along): PostgreSQL, and the shared
# libraries this machine's CPython builds load (ssl, ffi, sqlite3, bz2, lzma, readline, curses,
# expat, uuid, nis), so that the same image runs every role of `asynclab run --hosts
# containers` with the interpreters and environments bind-mounted from the host.
readonly ROOTFS_PACKAGES="postgresql-${PG_MAJOR} libffi8 libsqlite3-0 libbz2-1.0 liblzma5 libreadline8 libncursesw6 libexpat1 libuuid1 libnsl2 libtirpc3 libcrypt1"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_dir="${ASYNCLAB_CACHE_DIR:-$here/.cache}"
force="${ASYNCLAB_FORCE_REBUILD:-0}"
case "${1:-}" in
	--force) force=1 ;;
	'') ;;
	*) echo "usage: $0 [--force]" >&2; exit 2 ;;
esac

say() { printf 'build-image: %s\n' "$*" >&2; }
die() { printf 'build-image: error: %s\n' "$*" >&2; exit 1; }

start_ts=$SECONDS

command -v docker > /dev/null || die "docker CLI not found"
docker info > /dev/null 2>&1 || die "cannot talk to the Docker engine (is it running? are you allowed?)"

# ---------------------------------------------------------------- hashes ---
build_hash="$(
	{
		cat "$here/build-image.sh" "$here/docker-entrypoint.sh" "$here/Dockerfile"
		printf 'suite=%s pg=%s\n' "$SUITE" "$PG_MAJOR"
	} | sha256sum | cut -c1-64
)"

current="$(docker image inspect --format "{{ index .Config.Labels \"$LABEL\" }}" "$IMAGE" 2> /dev/null || true)"
if [[ $force != 1 && $current == "$build_hash" ]]; then
	say "$IMAGE is up to date (${LABEL}=${build_hash:0:12})"
	exit 0
fi
if [[ -n $current ]]; then
	say "$IMAGE is outdated (has ${current:0:12}, want ${build_hash:0:12}); rebuilding"
else
	say "$IMAGE not found; building"
fi

mkdir -p "$cache_dir"
# One build at a time (e.g. two `make docker-up` at once).
exec 9> "$cache_dir/build.lock"
flock 9

# ------------------------------------------------------- Debian mirrors ---
# Print "main URI" and "security URI" for $SUITE from the host's apt sources
# (one-line .list format and deb822 .sources format).
host_mirrors() {
	local files=() f
	[[ -f /etc/apt/sources.list ]] && files+=(/etc/apt/sources.list)
	for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[[ -f $f ]] && files+=("$f")
	done
	((${#files[@]})) || return 0
	awk -v suite="$SUITE" '
		function emit(kind, uri) { if (!(kind in seen)) { seen[kind] = 1; print kind, uri } }
		function take(uri, s) {
			sub(/\/+$/, "", uri)
			if (s == suite) emit("main", uri)
			else if (s == suite "-security" || s == suite "/updates") emit("security", uri)
		}
		function flush(   n, i, ts, ss) {
			if (st_types ~ /(^|[ \t])deb([ \t]|$)/ && st_uri != "" && st_enabled != "no") {
				n = split(st_suites, ss, /[ \t]+/)
				for (i = 1; i <= n; i++) if (ss[i] != "") take(st_uri, ss[i])
			}
			st_types = st_uri = st_suites = st_enabled = ""
		}
		FNR == 1 { if (deb822) flush(); deb822 = (FILENAME ~ /\.sources$/) }
		deb822 {
			if ($0 ~ /^[ \t]*#/) next
			if ($0 ~ /^[ \t]*$/) { flush(); next }
			line = $0
			key = tolower(line); sub(/:.*/, "", key)
			val = line; sub(/^[^:]*:[ \t]*/, "", val)
			if (key == "types") st_types = val
			else if (key == "uris") { split(val, us, /[ \t]+/); st_uri = us[1] }
			else if (key == "suites") st_suites = val
			else if (key == "enabled") st_enabled = tolower(val)
			next
		}
		/^[ \t]*deb[ \t]/ {
			line = $0
			sub(/#.*/, "", line)
			gsub(/\[[^]]*\]/, "", line)
			n = split(line, w, /[ \t]+/)
			j = 0
			for (i = 1; i <= n; i++) if (w[i] != "") a[++j] = w[i]
			if (j >= 3) take(a[2], a[3])
		}
		END { if (deb822) flush() }
	' "${files[@]}"
}

# -------------------------------------------------------------- rootfs ---
# Everything that shapes the rootfs lives in these functions: their text is
# part of the rootfs cache key (see rootfs_key below).
rootfs_chroot() {
	local rootfs="$1"
	shift
	chroot "$rootfs" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 HOME=/root "$@"
}

rootfs_build() {
	local rootfs="$1" mirror="$2" security="$3"
	local apt_opts=(-y -q --no-install-recommends -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)

	debootstrap --variant=minbase --components=main "$SUITE" "$rootfs" "$mirror"

	# apt sources: the host's mirror, with -updates and (if the host has it)
	# -security.
	rm -f "$rootfs/etc/apt/sources.list"
	{
		printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
			"$mirror" "$SUITE" "$SUITE"
		if [[ -n $security ]]; then
			printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
				"$security" "$SUITE"
		fi
	} > "$rootfs/etc/apt/sources.list.d/debian.sources"

	# No services started by maintainer scripts; no docs/man pages; no
	# "main" cluster created by postgresql-common (the entrypoint runs initdb).
	printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"
	chmod 755 "$rootfs/usr/sbin/policy-rc.d"
	cat > "$rootfs/etc/dpkg/dpkg.cfg.d/asynclab-nodoc" <<-'EOF'
		path-exclude /usr/share/doc/*
		path-include /usr/share/doc/*/copyright
		path-exclude /usr/share/man/*
		path-exclude /usr/share/info/*
		path-exclude /usr/share/lintian/*
		path-exclude /usr/share/locale/*
		path-include /usr/share/locale/locale.alias
	EOF
	mkdir -p "$rootfs/etc/postgresql-common/createcluster.d"
	echo 'create_main_cluster = false' > "$rootfs/etc/postgresql-common/createcluster.d/asynclab.conf"
	cp -L /etc/resolv.conf "$rootfs/etc/resolv.conf"

	rootfs_chroot "$rootfs" apt-get update -q
	rootfs_chroot "$rootfs" apt-get "${apt_opts[@]}" dist-upgrade
	# Same fixed ids as the official image (999), created before the package
	# would pick a dynamic one.
	rootfs_chroot "$rootfs" apt-get "${apt_opts[@]}" install passwd
	rootfs_chroot "$rootfs" groupadd -r --gid=999 postgres
	rootfs_chroot "$rootfs" useradd -r -g postgres --uid=999 \
		--home-dir=/var/lib/postgresql --shell=/bin/bash postgres
	mkdir -p "$rootfs/var/lib/postgresql"
	rootfs_chroot "$rootfs" chown postgres:postgres /var/lib/postgresql
	# shellcheck disable=SC2086 # word splitting of the package list is wanted
	rootfs_chroot "$rootfs" apt-get "${apt_opts[@]}" install $ROOTFS_PACKAGES
	test -x "$rootfs/usr/lib/postgresql/$PG_MAJOR/bin/postgres" ||
		die "postgres $PG_MAJOR binary missing after install"
	# shellcheck disable=SC2016 # dpkg-query format, not a shell expansion
	rootfs_chroot "$rootfs" dpkg-query -W -f '${Package} ${Version}\n' "postgresql-$PG_MAJOR"

	# Trim.
	rootfs_chroot "$rootfs" apt-get clean
	rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
		"$rootfs"/var/cache/debconf/*-old "$rootfs"/var/lib/dpkg/*-old \
		"$rootfs"/var/log/apt/* "$rootfs"/var/log/dpkg.log "$rootfs"/var/log/bootstrap.log \
		"$rootfs"/tmp/* "$rootfs"/var/tmp/* "$rootfs"/root/.bash_history
	rm -f "$rootfs/usr/sbin/policy-rc.d"
	: > "$rootfs/etc/resolv.conf"
}

rootfs_key="$(
	{
		declare -f rootfs_chroot rootfs_build
		printf 'suite=%s pg=%s packages=%s\n' "$SUITE" "$PG_MAJOR" "$ROOTFS_PACKAGES"
	} | sha256sum | cut -c1-16
)"
rootfs_tar="$cache_dir/rootfs-$SUITE-$rootfs_key.tar"
base_image="$BASE_REPO:$SUITE-pg$PG_MAJOR-$rootfs_key"

ensure_debootstrap() {
	command -v debootstrap > /dev/null && return 0
	say "installing debootstrap (apt-get)"
	export DEBIAN_FRONTEND=noninteractive
	local out
	if ! out="$(apt-get update -q 2>&1 && apt-get install -y -q --no-install-recommends debootstrap 2>&1)"; then
		printf '%s\n' "$out" | tail -n 20 >&2
		die "apt-get install debootstrap failed"
	fi
	command -v debootstrap > /dev/null || die "could not install debootstrap"
}

make_rootfs_tar() {
	[[ $(id -u) == 0 ]] || die "building the rootfs needs root (debootstrap, chroot); run as root"
	local mirror security m
	mirror="${ASYNCLAB_DEBIAN_MIRROR:-}"
	security="${ASYNCLAB_DEBIAN_SECURITY_MIRROR:-}"
	if [[ -z $mirror || -z $security ]]; then
		m="$(host_mirrors)"
		[[ -n $mirror ]] || mirror="$(awk '$1 == "main" { print $2 }' <<< "$m")"
		[[ -n $security ]] || security="$(awk '$1 == "security" { print $2 }' <<< "$m")"
	fi
	[[ -n $mirror ]] || die "no Debian mirror for '$SUITE' in /etc/apt/sources.list{,.d/*}; set ASYNCLAB_DEBIAN_MIRROR"
	ensure_debootstrap

	local work="$cache_dir/work-$rootfs_key"
	local log="$cache_dir/rootfs-build.log"
	rm -rf "$work"
	mkdir -p "$work"
	# On failure: show the end of the log, and leave no half-built rootfs
	# (nor mounts) behind.
	trap 'rc=$?
		umount -R "$work/rootfs/proc" 2> /dev/null || true
		umount -R "$work/rootfs/sys" 2> /dev/null || true
		rm -rf "$work"
		if ((rc != 0)); then tail -n 40 "$log" >&2; say "rootfs build failed (full log: $log)"; fi' EXIT
	local t0=$SECONDS
	say "building rootfs: debootstrap --variant=minbase $SUITE from $mirror + $ROOTFS_PACKAGES (log: $log)"
	rootfs_build "$work/rootfs" "$mirror" "$security" > "$log" 2>&1
	say "installed: $(grep -m1 "^postgresql-$PG_MAJOR " "$log" || true)"
	say "packing rootfs -> $rootfs_tar"
	tar --numeric-owner --xattrs -C "$work/rootfs" \
		--exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' --exclude='./run/*' \
		-cf "$work/rootfs.tar" .
	mv "$work/rootfs.tar" "$rootfs_tar"
	rm -rf "$work"
	trap - EXIT
	say "rootfs built in $((SECONDS - t0))s"
	# Older rootfs tarballs are dead weight now.
	find "$cache_dir" -maxdepth 1 -name 'rootfs-*.tar' ! -name "$(basename "$rootfs_tar")" -delete
}

# ----------------------------------------------------------- base image ---
if [[ -n "$(docker image inspect --format "{{ index .Config.Labels \"$ROOTFS_LABEL\" }}" "$base_image" 2> /dev/null || true)" ]]; then
	say "reusing base image $base_image"
else
	if [[ -f $rootfs_tar ]]; then
		say "reusing cached rootfs $rootfs_tar"
	else
		make_rootfs_tar
	fi
	say "docker import -> $base_image"
	docker import \
		--change "LABEL $ROOTFS_LABEL=$rootfs_key" \
		--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change 'CMD ["bash"]' \
		--message "debootstrap --variant=minbase $SUITE + $ROOTFS_PACKAGES" \
		"$rootfs_tar" "$base_image" > /dev/null
	# Drop base images of older rootfs recipes (ignore ones still in use).
	docker image ls --format '{{.Repository}}:{{.Tag}}' "$BASE_REPO" |
		grep -vxF "$base_image" | xargs -r docker rmi > /dev/null 2>&1 || true
fi

# ---------------------------------------------------------- final image ---
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
cp "$here/Dockerfile" "$ctx/Dockerfile"
cp "$here/docker-entrypoint.sh" "$ctx/docker-entrypoint.sh"
chmod 0755 "$ctx/docker-entrypoint.sh"

old_id="$(docker image inspect --format '{{.Id}}' "$IMAGE" 2> /dev/null || true)"
# Without the buildx plugin, use the classic builder explicitly (the base
# image exists only in the local engine; nothing is pulled either way).
if ! docker buildx version > /dev/null 2>&1; then
	export DOCKER_BUILDKIT=0
fi
say "docker build -> $IMAGE"
docker build --quiet \
	--build-arg "BASE_IMAGE=$base_image" \
	--build-arg "PG_MAJOR=$PG_MAJOR" \
	--label "$LABEL=$build_hash" \
	--label "$ROOTFS_LABEL=$rootfs_key" \
	-t "$IMAGE" "$ctx" > /dev/null
new_id="$(docker image inspect --format '{{.Id}}' "$IMAGE")"
if [[ -n $old_id && $old_id != "$new_id" ]]; then
	docker rmi "$old_id" > /dev/null 2>&1 || true
fi

size="$(docker image inspect --format '{{.Size}}' "$IMAGE")"
say "built $IMAGE (${LABEL}=${build_hash:0:12}, $((size / 1024 / 1024)) MiB) in $((SECONDS - start_ts))s"
