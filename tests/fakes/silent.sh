#!/usr/bin/env bash
# Fake UCI engine that completes the handshake, then never answers a search.
while IFS= read -r line; do
  case "$line" in
    uci) echo "id name FakeSilent"; echo "uciok" ;;
    isready) echo "readyok" ;;
    quit) exit 0 ;;
  esac
done
