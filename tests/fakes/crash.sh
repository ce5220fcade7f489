#!/usr/bin/env bash
# Fake UCI engine that completes the handshake, then dies on the first search.
while IFS= read -r line; do
  case "$line" in
    uci) echo "id name FakeCrash"; echo "uciok" ;;
    isready) echo "readyok" ;;
    go*) exit 3 ;;
    quit) exit 0 ;;
  esac
done
