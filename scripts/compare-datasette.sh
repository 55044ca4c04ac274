#!/usr/bin/env bash
# Northwind against Datasette on the same store, the same SQL and the same libsqlite3, for docs/performance.md.
# Seeds scale 100 (once), installs Datasette from PyPI into a virtual environment, serves one copy of the store with
# both programs, and runs each request with `wrk -t2 -c20` against one and then the other, in alternating rounds.
# Needs wrk, sqlite3 and python3-venv (apt-get install wrk sqlite3 python3-venv).
# Usage: scripts/compare-datasette.sh [seconds per run] [rounds]
set -euo pipefail
cd "$(dirname "$0")/.."
duration="${1:-8}"
rounds="${2:-5}"
work="${NORTHWIND_COMPARE_DIR:-/tmp/northwind-compare}"
nw_port=8097
ds_port=8098
bin=.build/release/northwind

swift build -c release --product northwind >/dev/null
mkdir -p "$work"
if [ ! -f "$work/seed.sqlite" ]; then
    "$bin" seed --scale 100 --store "$work/seed.sqlite" >/dev/null
fi
if [ ! -x "$work/venv/bin/datasette" ]; then
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install --quiet "datasette==0.65.*"
fi
# One copy, served by both: Northwind first, so the store is migrated before Datasette opens it.
store="$work/nw.sqlite"
rm -f "$store" "$store-wal" "$store-shm"
sqlite3 "$work/seed.sqlite" ".backup '$store'"
# A sales manager's token: reports are for managers.
token=$("$bin" employees token 5 --label compare --store "$store")
python3 scripts/datasette/metadata.py . >"$work/metadata.json"

"$bin" serve --store "$store" --port "$nw_port" >"$work/northwind.log" 2>&1 &
nw=$!
nw_pid=$nw
"$work/venv/bin/datasette" serve "$store" --port "$ds_port" --metadata "$work/metadata.json" \
    --plugins-dir scripts/datasette/plugins --setting sql_time_limit_ms 60000 --setting suggest_facets off \
    >"$work/datasette.log" 2>&1 &
ds=$!
ds_pid=$ds
writer=
trap 'kill $nw_pid $ds_pid $writer 2>/dev/null; wait 2>/dev/null' EXIT
until curl -sf -o /dev/null "http://127.0.0.1:$nw_port/signin" && curl -sf -o /dev/null "http://127.0.0.1:$ds_port/nw.json"; do
    sleep 0.2
done

year=$(( $(sqlite3 "$store" "SELECT substr(max(orderDate), 1, 4) FROM orders") - 1 ))
products=$(sqlite3 "$store" "SELECT count(*) FROM products")
sqlite3 "$store" "SELECT name FROM products" | tr ' ' '\n' | tr -cd 'A-Za-z\n' \
    | awk 'length($0) >= 3 { w = tolower($0); print substr(w, 1, 3); print substr(w, 1, 4); print w }' \
    | sort -u >"$work/queries.txt"
# Requests that vary: a search per query in turn, a product per id in turn. PREFIX and SUFFIX frame the value.
cat >"$work/vary.lua" <<'LUA'
local values = {}
for line in io.lines(os.getenv("VALUES")) do values[#values + 1] = line end
local prefix, suffix, i = os.getenv("PREFIX"), os.getenv("SUFFIX") or "", 0
request = function()
  i = i + 1
  return wrk.format("GET", prefix .. values[(i % #values) + 1] .. suffix)
end
LUA
seq 1 "$products" | awk 'BEGIN { srand(7) } { print int(rand() * 1e9) % '"$products"' + 1 }' >"$work/ids.txt"

nw="http://127.0.0.1:$nw_port"
ds="http://127.0.0.1:$ds_port"
auth="Authorization: Bearer $token"
results="$work/results.tsv"
: >"$results"
# run NAME SERVER URL [VALUES PREFIX SUFFIX]: one wrk run, one line of results.
run() {
    local name=$1 server=$2 url=$3 script=()
    local header=()
    [ "$server" = northwind ] && header=(-H "$auth")
    if [ $# -gt 3 ]; then
        export VALUES=$4 PREFIX=$5 SUFFIX=${6:-}
        script=(-s "$work/vary.lua")
    fi
    wrk -t2 -c20 -d"${duration}s" --latency "${header[@]}" "${script[@]}" "$url" | awk -v name="$name" -v server="$server" '
        function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
        /^ +50%/ { p50 = ms($2) } /^ +99%/ { p99 = ms($2) } /Requests\/sec/ { rps = $2 }
        /Non-2xx/ { bad = $NF } /Socket errors/ { errors = $0 }
        END { printf "%s\t%s\t%s\t%s\t%s\t%s\n", name, server, rps, p50, p99, bad + 0 }' >>"$results"
}
# request NAME NORTHWIND_URL DATASETTE_URL [VALUES NW_PREFIX DS_PREFIX DS_SUFFIX]
request() {
    local name=$1 round=$2
    shift 2
    local nwurl=$1 dsurl=$2
    if [ $# -gt 2 ]; then
        local values=$3 nwprefix=$4 dsprefix=$5 dssuffix=$6
        if (( round % 2 )); then
            run "$name" northwind "$nw" "$values" "$nwprefix"; run "$name" datasette "$ds" "$values" "$dsprefix" "$dssuffix"
        else
            run "$name" datasette "$ds" "$values" "$dsprefix" "$dssuffix"; run "$name" northwind "$nw" "$values" "$nwprefix"
        fi
    elif (( round % 2 )); then
        run "$name" northwind "$nwurl"; run "$name" datasette "$dsurl"
    else
        run "$name" datasette "$dsurl"; run "$name" northwind "$nwurl"
    fi
}

for round in $(seq 1 "$rounds"); do
    echo "round $round of $rounds" >&2
    request "product search (answers cached)" "$round" "$nw/api/v1/products/search?q=cote" "$ds/nw/search.json?_shape=array&q=cote"
    # Another process changes a product every 100 ms, so Northwind's answer cache keeps emptying.
    ( while true; do "$bin" products receive 1 1 --store "$store" >/dev/null; sleep 0.1; done ) &
    writer=$!
    request "product search (cache defeated)" "$round" "" "" "$work/queries.txt" "/api/v1/products/search?q=" \
        "/nw/search.json?_shape=array&q=" ""
    kill $writer; wait $writer 2>/dev/null || true; writer=
    request "product by id" "$round" "" "" "$work/ids.txt" "/api/v1/products/" "/nw/product.json?_shape=array&id=" ""
    request "50 products with their count" "$round" "$nw/api/v1/products?limit=50" "$ds/nw/products.json?_size=50&_sort=name"
    request "Ten Most Expensive Products" "$round" "$nw/api/v1/reports/ten-most-expensive-products" \
        "$ds/nw/ten_most_expensive_products.json?_shape=array"
    request "Category Sales for $year" "$round" "$nw/api/v1/reports/category-sales-for-1997?year=$year" \
        "$ds/nw/category_sales.json?_shape=array&year=$year"
    request "Sales by Category for $year" "$round" "$nw/api/v1/reports/sales-by-category?year=$year" \
        "$ds/nw/sales_by_category.json?_shape=array&year=$year"
    request "Top customers, all history" "$round" "$nw/api/v1/reports/top-customers" \
        "$ds/nw/top_customers.json?_shape=array&from=&to="
done

# Memory after the load: the peak resident set (VmHWM) and what is resident now, anonymous and file-backed (the
# store file mapped by SQLite's mmap counts there for Northwind; Datasette reads through its page cache instead).
memory() {
    awk -v name="$1" '/^(VmHWM|RssAnon|RssFile):/ { v[$1] = $2 / 1024 }
        END { printf "%-10s peak %.0f MB; now anonymous %.0f MB, file %.0f MB\n", name, v["VmHWM:"], v["RssAnon:"], v["RssFile:"] }' \
        "/proc/$2/status"
}
memory Northwind "$nw_pid" >"$work/memory.txt"
memory Datasette "$ds_pid" >>"$work/memory.txt"

python3 - "$results" <<'PY'
import statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
names = list(dict.fromkeys(r[0] for r in rows))
print(f"{'request':34} {'Northwind r/s':>13} {'Datasette r/s':>13} {'ratio':>6}  {'p50 NW/DS ms':>14}  {'p99 NW/DS ms':>15}  non-2xx")
for name in names:
    def med(server, column):
        return statistics.median(float(r[column]) for r in rows if r[0] == name and r[1] == server)
    bad = sum(int(r[5]) for r in rows if r[0] == name)
    nw, ds = med("northwind", 2), med("datasette", 2)
    print(f"{name:34} {nw:13.0f} {ds:13.0f} {nw / ds:5.2f}x  {med('northwind', 3):6.1f} / {med('datasette', 3):6.1f}"
          f"  {med('northwind', 4):7.1f} / {med('datasette', 4):6.1f}  {bad}")
print(f"(median of {len(rows) // (2 * len(names))} alternating rounds, wrk -t2 -c20)")
PY
cat "$work/memory.txt"
