SHELL := /bin/bash
# deepchess: user entry points. Everything here needs only the Rust toolchain unless a
# target says otherwise (install-* targets install optional tools with apt/pip, explicitly).
CARGO ?= cargo
BIN := target/release/deepchess

.PHONY: all build test test-full bench perft clean

all: build

build:
	$(CARGO) build --release

# The README's test command, and what CI runs. Fast: deep perft etc. are #[ignore]d.
test:
	$(CARGO) test --all-targets 2>&1 | tee target/test.log; exit $${PIPESTATUS[0]}

# Everything, including the ignored (slow) tests. Run before resolving an issue.
test-full:
	$(CARGO) test --all-targets -- --include-ignored

bench: build

perft: build
	$(BIN) perft 6

clean:
	$(CARGO) clean
