#!/usr/bin/env bash
# The resident memory of `northwind serve` under a mix of requests, for docs/performance.md ("Memory of serve").
# Serves a copy of the scale-100 store that scripts/compare-datasette.sh made, runs each request with `wrk -t2 -c20`
# for 4 s (search while another process changes a product every 100 ms, search cached, 50 products, three reports,
# the products page, gross margin), samples /proc every 0.2 s, and prints the peak resident set (VmHWM), the most
# anonymous and file-backed memory seen, and each request's rate. Needs wrk and a release build.
# Usage: scripts/memory-under-load.sh LABEL [NAME=VALUE ...]   (the pairs are the server's environment)
set -euo pipefail
cd "$(dirname "$0")/.."
label=${1:?usage: scripts/memory-under-load.sh LABEL [NAME=VALUE ...]}
shift
work="${NORTHWIND_COMPARE_DIR:-/tmp/northwind-compare}"
bin=.build/release/northwind
port=8191
[ -f "$work/nw.sqlite" ] || { echo "no $work/nw.sqlite: run scripts/compare-datasette.sh first" >&2; exit 1; }
run=$(mktemp -d)
swift build -c release --product northwind >"$run/build.log" 2>&1 || { cat "$run/build.log" >&2; exit 1; }
store="$run/nw.sqlite"
sqlite3 "$work/nw.sqlite" ".backup '$store'"
token=$("$bin" employees token 5 --label memory --store "$store")
env "$@" "$bin" serve --store "$store" --port "$port" >"$run/serve.log" 2>&1 &
pid=$!
writer=
sampler=
trap 'kill $pid $writer $sampler 2>/dev/null; wait 2>/dev/null; rm -rf "$run"' EXIT
until curl -sf -o /dev/null "http://127.0.0.1:$port/signin"; do sleep 0.2; done
( while kill -0 $pid 2>/dev/null; do
    awk '/^(RssAnon|RssFile):/ { printf "%s ", $2 } END { print "" }' "/proc/$pid/status"
    sleep 0.2
  done ) >"$run/samples" &
sampler=$!
cat >"$run/vary.lua" <<'LUA'
local values = {}
for line in io.lines(os.getenv("VALUES")) do values[#values + 1] = line end
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", os.getenv("PREFIX") .. values[(i % #values) + 1])
end
LUA
sqlite3 "$store" "SELECT name FROM products" | tr ' ' '\n' | tr -cd 'A-Za-z\n' \
    | awk 'length($0) >= 3 { w = tolower($0); print substr(w, 1, 3); print w }' | sort -u >"$run/queries"
url="http://127.0.0.1:$port"
rate() { wrk -t2 -c20 -d4s -H "Authorization: Bearer $token" "$@" | awk '/Requests\/sec/ { print $2 }'; }
( while true; do "$bin" products receive 1 1 --store "$store" >/dev/null; sleep 0.1; done ) &
writer=$!
rates=$(VALUES="$run/queries" PREFIX=/api/v1/products/search?q= rate -s "$run/vary.lua" "$url")
kill $writer; wait $writer 2>/dev/null || true; writer=
for path in "/api/v1/products/search?q=cote" "/api/v1/products?limit=50" \
    "/api/v1/reports/category-sales-for-1997?year=2025" "/api/v1/reports/sales-by-category?year=2025" \
    "/api/v1/reports/top-customers" "/products" "/api/v1/reports/gross-margin"; do
    rates="$rates $(rate "$url$path")"
done
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
awk -v label="$label" -v hwm="$hwm" -v rates="$rates" '
    { if ($1 > anon) anon = $1; if ($2 > file) file = $2 }
    END { printf "%s: peak %.0f MB, anonymous at most %.0f MB, file-backed at most %.0f MB; requests/s:%s\n",
          label, hwm / 1024, anon / 1024, file / 1024, " " rates }' "$run/samples"
