# Thin targets over the asynclab CLI. `make run-all` and `make test` do all the set-up.
CARGO   ?= cargo
PYTHON  ?= python3
PYTHONS ?= 3.12
BIN     := target/release/asynclab
TOOLS   := .venvs/.tools
UV      := $(TOOLS)/bin/uv
RUFF    := $(TOOLS)/bin/ruff
TOOL_PINS := uv==0.13.9 ruff==0.17.6

.PHONY: build tools envs run-all test test-rust test-py lint bench charts clean-envs

build:
	$(CARGO) build --release --locked

# uv (fast environment builds) and ruff, in a private tools environment.
$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check $(TOOL_PINS)

tools: $(UV)

envs: build tools
	$(BIN) envs --python $(PYTHONS)

run-all: envs
	$(BIN) run --scenario all --python $(PYTHONS) $(RUN_FLAGS)
	@echo "Report: results/latest/summary.md"

lint: tools
	$(CARGO) fmt --check
	$(CARGO) clippy --release --all-targets --locked -- -D warnings
	$(RUFF) check workloads
	$(RUFF) format --check workloads

test-rust: envs
	$(CARGO) test --release --locked

test-py: envs
	$$(ls .venvs/cpython-$(PYTHONS).*/bin/python | head -n1) -m pytest -q workloads/tests

test: lint test-rust test-py

bench: build
	$(BIN) self-check

clean-envs:
	rm -rf .venvs
