SHELL := /bin/bash
# deepchess: user entry points. Everything here needs only the Rust toolchain unless a
# target says otherwise (install-* targets install optional tools with apt/pip, explicitly).
CARGO ?= cargo
BIN := target/release/deepchess

.PHONY: all build test test-full bench bench-tensor install-numpy perft clean

all: build

build:
	$(CARGO) build --release

# The README's test command, and what CI runs. Fast: deep perft etc. are #[ignore]d.
test:
	$(CARGO) test --all-targets 2>&1 | tee target/test.log; exit $${PIPESTATUS[0]}

# Everything, including the ignored (slow) tests. Run before resolving an issue.
test-full:
	$(CARGO) test --all-targets -- --include-ignored

bench: build bench-tensor

# GEMM GFLOPS per kernel on the network shapes (+ numpy/OpenBLAS ratio if numpy is importable).
bench-tensor: build
	$(BIN) bench-tensor

# Optional: numpy, only for the OpenBLAS comparison in bench-tensor.
install-numpy:
	@echo "Installing numpy with pip (only used by 'make bench-tensor' to compare with OpenBLAS)"
	pip install numpy

perft: build
	$(BIN) perft 6

clean:
	$(CARGO) clean
