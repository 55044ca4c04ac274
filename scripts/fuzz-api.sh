#!/usr/bin/env bash
# Fuzz the JSON API with Schemathesis against a fresh demo store, once as a manager and once as a sales representative
# (their permissions differ, so do the answers). Exits non-zero on any failure, or if the server did not survive it.
# Usage: scripts/fuzz-api.sh [northwind binary, default .build/debug/northwind]
#   FUZZ_MAX_EXAMPLES  cases per operation and phase (default 100: about 3 minutes in all on 2 cores)
#   FUZZ_SEED          the same seed generates the same cases (default 1)
#   FUZZ_ARGS          more `schemathesis run` options, e.g. "--report junit --report-dir /tmp/fuzz-report"
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(realpath "${1:-$root/.build/debug/northwind}")
[ -x "$bin" ] || { echo "fuzz-api: no northwind binary at $bin" >&2; exit 1; }

# Schemathesis ($venv, $py, $version), the scratch folder $work, and the cleanup of $server.
. "$root/scripts/schemathesis-env.sh"
store=$work/store.sqlite
# Python, not curl: a fresh Debian machine may have no curl. Any answer but a 2xx counts as down.
answers() { "$py" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10)' "$1/api/openapi.json" 2>/dev/null; }

# The first command on a new store seeds the demo data, so tokens can be made before the server starts.
employee_titled() {
    "$bin" employees list --json --limit 1000 --store "$store" | "$py" -c '
import json, sys
print(next(e["id"] for e in json.load(sys.stdin)["items"] if e.get("title") in sys.argv[1:]))' "$@"
}
manager_token=$("$bin" employees token "$(employee_titled "Vice President, Sales" "Sales Manager")" --label fuzz --store "$store")
rep_token=$("$bin" employees token "$(employee_titled "Sales Representative")" --label fuzz --store "$store")

# Port 0: the server picks a free port and prints its address; choosing one here could race with another process.
"$bin" serve --store "$store" --port 0 >"$work/serve.log" 2>&1 &
server=$!
base=
for _ in $(seq 150); do
    base=$(sed -n 's|^Northwind is serving .* at \(http://[^ ]*[^/]\)/*$|\1|p' "$work/serve.log")
    if [ -n "$base" ] && answers "$base"; then break; fi
    kill -0 "$server" 2>/dev/null || break
    sleep 0.2
done
if [ -z "$base" ] || ! answers "$base"; then
    cat "$work/serve.log" >&2; echo "fuzz-api: the server did not start" >&2; exit 1
fi

failed=0
fuzz() {
    echo "== Schemathesis $version as $1, against $base"
    # Why these options:
    #   --checks all but positive_data_acceptance: that check wants a 2xx for every request the document allows, and
    #     the document cannot say that a customer code must exist or a name must be unique, so those 422s would fail
    #     every run. (object_level_authorization needs a second identity configured; without one it does nothing.)
    #   every phase: coverage sends boundary values, missing/extra fields and undeclared methods; fuzzing sends random
    #     valid and invalid data; stateful chains create -> read -> change -> delete through the ids responses return.
    #   --continue-on-failure: report every distinct failure of an operation, not only the first.
    #   --seed, --generation-database none: the same cases on every run and machine, none replayed from an earlier
    #     run's database, so a failure can be reproduced with the seed that the summary prints.
    #   --output-sanitize false: the printed curl commands carry the token and replay as they are; it dies with the
    #     temporary store.
    #   --request-timeout: a hung request fails the run instead of hanging it.
    #   --workers 1: Schemathesis's workers are threads, and Python 3.11's ast module keeps one recursion counter per
    #     interpreter (CPython gh-106905), so Hypothesis parsing in two threads at once fails at random with "AST
    #     constructor recursion depth mismatch" (CI, stop 63). One worker takes about half again as long.
    # The working directory is the temporary one, where Schemathesis and Hypothesis leave their caches.
    # shellcheck disable=SC2086 # FUZZ_ARGS holds several options
    (cd "$work" && "$venv/bin/schemathesis" run "$base/api/openapi.json" \
        --header "Authorization: Bearer $2" \
        --checks all --exclude-checks positive_data_acceptance \
        --phases examples,coverage,fuzzing,stateful \
        --max-examples "${FUZZ_MAX_EXAMPLES:-100}" --seed "${FUZZ_SEED:-1}" --generation-database none \
        --continue-on-failure --output-sanitize false --request-timeout 10 --workers 1 --no-color \
        ${FUZZ_ARGS:-}) || failed=1
}
fuzz "a manager" "$manager_token"
fuzz "a sales representative" "$rep_token"

# Schemathesis never sends HEAD, yet every GET route must answer it like GET, without the body (RFC 9110 9.3.2).
echo "== HEAD on every GET route without a path parameter"
"$py" - "$base" "$manager_token" <<'PY' || failed=1
import json, sys, urllib.error, urllib.request
base, token = sys.argv[1:]
paths = [p for p, ops in json.load(urllib.request.urlopen(base + "/api/openapi.json"))["paths"].items() if "get" in ops and "{" not in p]
wrong = []
for path in ["/api/openapi.json"] + paths:
    request = urllib.request.Request(base + path, method="HEAD", headers={"Authorization": "Bearer " + token})
    try:
        urllib.request.urlopen(request, timeout=10)
    except urllib.error.HTTPError as error:
        if error.code in (404, 405, 501): wrong.append(f"  HEAD {path} -> {error.code}, but GET is routed")
print("\n".join(wrong) or f"  all {len(paths) + 1} answer")
sys.exit(1 if wrong else 0)
PY

# A crash shows in Schemathesis only as connection errors; say so plainly, with the server's last words.
if ! kill -0 "$server" 2>/dev/null || ! answers "$base"; then
    echo "fuzz-api: the server is down or not answering after the fuzzing; the end of its log:" >&2
    tail -60 "$work/serve.log" >&2
    failed=1
fi
[ "$failed" = 0 ] || echo "fuzz-api: FAILED (see the failures above)" >&2
exit "$failed"
