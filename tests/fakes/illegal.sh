#!/usr/bin/env bash
# Fake UCI engine that answers every search with an illegal move.
while IFS= read -r line; do
  case "$line" in
    uci) echo "id name FakeIllegal"; echo "uciok" ;;
    isready) echo "readyok" ;;
    go*) echo "info depth 1 score cp 0 pv e2e5"; echo "bestmove e2e5" ;;
    quit) exit 0 ;;
  esac
done
