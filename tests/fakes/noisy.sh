#!/usr/bin/env bash
# Fake UCI engine whose every line carries terminal escapes and NULs: its name, its info
# strings and the (illegal) move it answers. None of these bytes may reach the PGN or the
# terminal raw.
while IFS= read -r line; do
  case "$line" in
    uci) printf 'id name Noisy\x1b[31mRed\x00Nul\tTab\r\n'; echo "uciok" ;;
    isready) echo "readyok" ;;
    go*) printf 'info depth 1 score cp 0 string \x1b]0;pwned\x07 \x00\n'; printf 'bestmove e2e5\x1b[2J\x00\n' ;;
    quit) exit 0 ;;
  esac
done
