SHELL := /bin/bash
# deepchess: user entry points. Everything here needs only the Rust toolchain unless a
# target says otherwise (install-* targets install optional tools with apt/pip, explicitly).
CARGO ?= cargo
BIN := target/release/deepchess

.PHONY: all build train test test-full bench bench-perft bench-pgn bench-tensor perft datagen dataset install-stockfish install-numpy clean

all: build

build:
	$(CARGO) build --release

# The README's test command, and what CI runs. Fast: deep perft etc. are #[ignore]d.
test:
	@mkdir -p target
	$(CARGO) test --all-targets 2>&1 | tee target/test.log; exit $${PIPESTATUS[0]}

# Everything, including the ignored (slow) tests. Run before resolving an issue.
test-full:
	$(CARGO) test --all-targets -- --include-ignored

# Every benchmark, each figure beside its anchor as a ratio measured in the same run.
bench: bench-tensor bench-perft bench-pgn

# Perft speed against Stockfish's `go perft` (when Stockfish is installed; see install-stockfish).
bench-perft: build
	$(BIN) bench-perft --runs 5

# PGN ingest (parse + SAN + legality + sampling) against pgn-extract, when installed.
target/corpus.pgn: data/sf15-selfplay-1.pgn.xz data/sf15-selfplay-2.pgn.xz
	xz -dc $^ > $@.tmp && mv $@.tmp $@
bench-pgn: build target/corpus.pgn
	$(BIN) bench-pgn --pgn target/corpus.pgn --runs 5

# Datasets from the shipped corpus (paper sampling, 5 % of games held out).
CORPUS := $(wildcard data/*.pgn.xz)
dataset: runs/dataset/train.dcds
runs/dataset/train.dcds: $(CORPUS) | build
	$(BIN) data $(foreach f,$(CORPUS),--pgn $(f)) --out runs/dataset --quiet

# The three training phases. PROFILE=quick (default, ~30 min on 2 cores) | paper | tiny.
# Always resumable: rerunning continues an interrupted run or just prints its results.
PROFILE ?= quick
train: build dataset
	$(BIN) train --profile $(PROFILE) --data runs/dataset --out runs/$(PROFILE) --resume

# Grow the corpus with Stockfish self-play (needs Stockfish: make install-stockfish).
STOCKFISH ?= $(shell command -v stockfish || ls /usr/games/stockfish 2>/dev/null)
GAMES ?= 1000
datagen: build
	@test -n "$(STOCKFISH)" || { echo "Stockfish not found: run 'make install-stockfish' (apt) or set STOCKFISH=path"; exit 1; }
	$(BIN) datagen --engine $(STOCKFISH) --option Hash=16 --option Threads=1 --out data/datagen.pgn --games $(GAMES) --concurrency 2

# Optional: installs Debian's Stockfish 15.1 (an anchor for benchmarks and an opponent). Uses apt.
install-stockfish:
	@echo "Installing Stockfish with apt-get (Debian package 'stockfish', into /usr/games)"
	apt-get update && apt-get install -y stockfish
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
