#!/bin/sh
# Builds rsloop from its PyPI sdist into the lab's environment of each Python version given
# (`make rsloop PYTHONS=3.12,3.14`): it has no wheels for this platform. The stable Rust
# toolchain builds it in nightly-feature mode (2-4 minutes per interpreter). An environment of
# a Debian root (3.14, 3.15: `asynclab pythons add`) is built inside the root, with the root's
# C compiler and Python headers (installed there on first use from Debian's unstable suite,
# whose Release file on this mirror is past its Valid-Until date, hence the apt option) and the
# host's Rust toolchain, which the root sees at the same path. A failure is reported and the
# others go on; `--loop rsloop` cells of that interpreter are then skipped with the reason.
#
# usage: scripts/build-rsloop.sh PIN UV VERSION...
set -u
pin=$1 uv=$2
shift 2
rust_env='RUSTUP_TOOLCHAIN=stable RUSTC_BOOTSTRAP=1 RUSTFLAGS=-Zcrate-attr=feature(allocator_api)'
cargo_dir=$(dirname "$(command -v cargo || echo /nonexistent/cargo)")
failed=0
for v in "$@"; do
  py=$(ls -d .venvs/cpython-"$v".*/bin/python 2>/dev/null | head -n1)
  if [ -z "$py" ]; then
    echo "rsloop: no environment for Python $v; make it with \`make envs PYTHONS=$v\`"
    failed=1
    continue
  fi
  env_dir=$(cd "$(dirname "$py")/.." && pwd)
  root=.venvs/roots/python$v
  echo "building $pin into $env_dir"
  if [ -x "$root/launch" ]; then
    "$root/launch" /bin/sh -c "
      set -e
      if ! command -v cc >/dev/null || [ ! -f /usr/include/python$v/Python.h ]; then
        apt-get -q -o Acquire::Check-Valid-Until=false update >/dev/null
        apt-get -q -y -o Acquire::Check-Valid-Until=false install --no-install-recommends \
          gcc libc6-dev python$v-dev >/dev/null
      fi
      export PATH=$cargo_dir:\$PATH SSL_CERT_FILE=/etc/ssl/asynclab-host-ca.crt
      export RUSTUP_TOOLCHAIN=stable RUSTC_BOOTSTRAP=1 RUSTFLAGS='-Zcrate-attr=feature(allocator_api)'
      /usr/local/bin/uv pip install --python $env_dir/bin/python$v --no-binary rsloop \
        --compile-bytecode --link-mode=copy $pin
    " || { echo "rsloop did not build for Python $v: its --loop rsloop cells will be skipped"; failed=1; }
  else
    env $rust_env "$uv" pip install --python "$py" --no-binary rsloop --compile-bytecode "$pin" \
      || { echo "rsloop did not build for Python $v: its --loop rsloop cells will be skipped"; failed=1; }
  fi
done
exit $failed
