#!/usr/bin/env bash
# Web load figures for docs/performance.md: wrk on loopback against a release `northwind serve` on a store seeded at
# scale 100 (or NORTHWIND_LOAD_SCALE). Needs wrk and sqlite3 (apt-get install wrk sqlite3).
# Usage: scripts/load-test.sh [seconds per run]
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-15}"
work="${NORTHWIND_LOAD_DIR:-/tmp/northwind-load}"
port=8099
scale="${NORTHWIND_LOAD_SCALE:-100}"
store="$work/nw-$scale.sqlite"
bin=.build/release/northwind

swift build -c release --product northwind >/dev/null
mkdir -p "$work"
if [ ! -f "$store" ]; then
    "$bin" seed --scale "$scale" --store "$store" >/dev/null
fi
# An API token for a sales representative, and a browser session through the real sign-in form.
printf 'load-test-password\n' | "$bin" employees set-password 3 --store "$store" >/dev/null
token=$("$bin" employees token 3 --label load-test --store "$store")
login=$(sqlite3 "$store" "SELECT login FROM credentials WHERE employeeID = 3")

"$bin" serve --store "$store" --port "$port" >"$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null' EXIT
until curl -s -o /dev/null "http://127.0.0.1:$port/signin"; do sleep 0.2; done
# The sign-in form's token comes back in the form and in its cookie (a double submit), as a browser sends it.
form_token=$(curl -s -c "$work/jar" "http://127.0.0.1:$port/signin" | sed -n 's/.*name="_csrf" value="\([^"]*\)".*/\1/p')
cookie=$(curl -s -o /dev/null -D - -b "$work/jar" -d "_csrf=$form_token&login=$login&password=load-test-password&next=%2F" \
    "http://127.0.0.1:$port/signin" | sed -n 's/^[Ss]et-[Cc]ookie: \(northwind_session=[^;]*\).*/\1/p')

# Queries as people type them: the first three and four letters of every word in the catalogue, and whole words.
sqlite3 "$store" "SELECT name FROM products" | tr ' ' '\n' | tr -cd 'A-Za-z\n' \
    | awk 'length($0) >= 3 { w = tolower($0); print substr(w, 1, 3); print substr(w, 1, 4); print w }' \
    | sort -u >"$work/queries.txt"
export QUERIES="$work/queries.txt"

# On a shared virtual machine the host may take CPU time away ("steal"); each run reports how much, since it changes
# the figures more than anything in the code.
steal() { awk '/^cpu / { print $9 + 0, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
run() {
    echo "== $1"
    shift
    read -r steal0 total0 < <(steal)
    wrk -t2 -c"${connections:-32}" -d"${duration}s" --latency "$@" | grep -E "Requests/sec|^ +(50|90|99)%|Non-2xx|Socket errors"
    read -r steal1 total1 < <(steal)
    echo "   CPU time taken by the host (steal): $(( 100 * (steal1 - steal0) / (total1 - total0 + 1) ))%"
}
auth="Authorization: Bearer $token"
run "search, one query (cote)" -H "$auth" "http://127.0.0.1:$port/api/v1/products/search?q=cote"
run "search, $(wc -l <"$work/queries.txt") different queries in turn" -H "$auth" -s scripts/wrk/search.lua "http://127.0.0.1:$port"
# Another process changes a product every 100 ms, so the server's caches keep emptying.
( while true; do "$bin" products receive 1 1 --store "$store" >/dev/null; sleep 0.1; done ) &
writer=$!
run "search, queries in turn, while another process writes every 100 ms" -H "$auth" -s scripts/wrk/search.lua "http://127.0.0.1:$port"
kill $writer; wait $writer 2>/dev/null || true
run "products page (session cookie, first page of 25)" -H "Cookie: $cookie" "http://127.0.0.1:$port/products"
run "products page, a search" -H "Cookie: $cookie" "http://127.0.0.1:$port/products?q=cote"

# Pages and API lists with -c20 while another client runs a report in a loop (issue 14: p99 at most 5 x p50).
year=$(( $(sqlite3 "$store" "SELECT substr(max(orderDate), 1, 4) FROM orders") - 1 ))
order=$(sqlite3 "$store" "SELECT number FROM orders ORDER BY id DESC LIMIT 1")
# Reports are for managers: employee 5 is the demo data's sales manager.
report="http://127.0.0.1:$port/api/v1/reports/category-sales-for-1997?year=$year"
manager="Authorization: Bearer $("$bin" employees token 5 --label load-test --store "$store")"
curl -sf -o /dev/null -H "$manager" "$report"
( while true; do curl -sf -o /dev/null -H "$manager" "$report"; done ) &
reporter=$!
connections=20
run "products page, while a report runs (-c20)" -H "Cookie: $cookie" "http://127.0.0.1:$port/products"
run "API product list of 50, while a report runs (-c20)" -H "$auth" "http://127.0.0.1:$port/api/v1/products?limit=50"
run "order page, while a report runs (-c20)" -H "Cookie: $cookie" "http://127.0.0.1:$port/orders/$order"
kill $reporter; wait $reporter 2>/dev/null || true

