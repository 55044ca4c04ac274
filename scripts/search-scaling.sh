#!/usr/bin/env bash
# Issue 14's "uncached search scales": the API product search with every answer a cache miss (each request carries a
# parameter never sent before, which the search ignores but the answer cache keys on), at scale 1 and at scale 100,
# alternating, against a release `northwind serve`. Prints each round and the ratio of the median costs (goal <= 1.3).
# Needs wrk and sqlite3 (apt-get install wrk sqlite3).
# Usage: scripts/search-scaling.sh [seconds per run] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-10}"
rounds="${2:-3}"
work="${NORTHWIND_LOAD_DIR:-/tmp/northwind-load}"
port=8099
bin=.build/release/northwind

swift build -c release --product northwind >/dev/null
mkdir -p "$work"

# One run: serve the store at scale $1, search with words from its own product names (the first three and four letters of
# each word, and whole words, as people type them) with $2 appended to each, print "requests/s p50 p99".
run() {
    local store="$work/nw-$1.sqlite"
    [ -f "$store" ] || "$bin" seed --scale "$1" --store "$store" >/dev/null
    local token
    token=$("$bin" employees token 3 --label search-scaling --store "$store")
    sqlite3 "$store" "SELECT name FROM products" | tr ' ' '\n' | tr -cd 'A-Za-z\n' \
        | awk 'length($0) >= 3 { w = tolower($0); print substr(w, 1, 3); print substr(w, 1, 4); print w }' \
        | sort -u >"$work/queries-$1.txt"
    "$bin" serve --store "$store" --port "$port" >"$work/serve.log" 2>&1 &
    local server=$!
    until curl -s -o /dev/null "http://127.0.0.1:$port/signin"; do sleep 0.2; done
    MISS=1 EXTRA="${2:-}" QUERIES="$work/queries-$1.txt" wrk -t2 -c32 -d"${duration}s" --latency -H "Authorization: Bearer $token" \
        -s scripts/wrk/search.lua "http://127.0.0.1:$port" \
        | awk '/Requests\/sec/ { rps = $2 } /^ +50%/ { p50 = $2 } /^ +99%/ { p99 = $2 } /Non-2xx/ { bad = $0 }
               END { if (bad != "") { print bad > "/dev/stderr"; exit 1 } print rps, p50, p99 }'
    kill "$server"; wait "$server" 2>/dev/null || true
}

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# A page of 20 (the default) finds one or two products at scale 1 and a full page at scale 100; one result a search
# compares the finding alone.
for extra in "" "&limit=1"; do
    small=(); large=()
    for round in $(seq "$rounds"); do
        read -r rps p50 p99 < <(run 1 "$extra"); small+=("$rps"); echo "round $round, scale 1${extra:+ $extra}:   $rps requests/s, p50 $p50, p99 $p99"
        read -r rps p50 p99 < <(run 100 "$extra"); large+=("$rps"); echo "round $round, scale 100${extra:+ $extra}: $rps requests/s, p50 $p50, p99 $p99"
    done
    s=$(median "${small[@]}"); l=$(median "${large[@]}")
    echo "median${extra:+ with $extra}: scale 1 $s requests/s, scale 100 $l requests/s; a miss at scale 100 costs $(awk -v s="$s" -v l="$l" 'BEGIN { printf "%.2f", s / l }') times one at scale 1"
done
