#!/bin/bash
# Times every report on a store (best of three), e.g. a scale-100 seed: northwind seed --scale 100 --store big.sqlite
# usage: scripts/report-timings.sh STORE  (after swift build -c release)
S=$1; B="$(dirname "$0")/../.build/release/northwind"
for r in $($B report list --json --store $S | python3 -c 'import json,sys; print(" ".join(x["name"] for x in json.load(sys.stdin)))'); do
  args=""
  case $r in
    *1997*|quarterly-orders|sales-by-category|sales-totals-by-amount) args="--year 2025";;
    cust-order-hist|cust-orders-orders) args="--customer $(sqlite3 $S 'select code from customers limit 1')";;
    cust-orders-detail) args="--order $(sqlite3 $S 'select number from orders limit 1')";;
    employee-sales-by-country|sales-by-year) args="--from 2025-01-01 --to 2025-12-31";;
    sales-by-category-proc) args="--category \"$(sqlite3 $S 'select name from categories limit 1')\" --year 2025";;
  esac
  for i in 1 2 3; do eval $B report $r --store $S $args --timing --format csv 2>&1 >/dev/null | tail -1; done | sort -t' ' -k5 -n | head -1
done
