#!/usr/bin/env bash
# Fuzz the JSON API with Schemathesis against a fresh demo store, once as a manager and once as a sales representative
# (their permissions differ, so do their answers). Exits non-zero on any failure, or if the server did not survive.
# Usage: scripts/fuzz-api.sh [northwind binary, default .build/debug/northwind]
#   FUZZ_MAX_EXAMPLES  generated cases per operation and phase (default 50: about N minutes on 2 cores)
#   FUZZ_SEED          Hypothesis seed; the same seed replays the same cases (default 1)
#   FUZZ_ARGS          more `schemathesis run` options, e.g. "--report junit --report-dir /tmp/fuzz"
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-.build/debug/northwind}")
examples=${FUZZ_MAX_EXAMPLES:-50}
seed=${FUZZ_SEED:-1}

# A pinned version in its own virtualenv: checks and their failure codes change between releases, and Schemathesis
# pins a Hypothesis that must not replace anyone else's.
version=4.32.5
venv=${XDG_CACHE_HOME:-$HOME/.cache}/northwind/schemathesis-$version
if [ ! -x "$venv/bin/schemathesis" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version"
fi

work=$(mktemp -d)
server=
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
store=$work/store.sqlite

# The first command on a new store seeds the demo data, so the tokens exist before the server starts.
employee_with_title() {
    "$bin" employees list --json --limit 1000 --store "$store" | "$venv/bin/python" -c '
import json, sys
titles = sys.argv[1:]
print(next(e["id"] for e in json.load(sys.stdin)["items"] if e.get("title") in titles))' "$@"
}
manager_token=$("$bin" employees token "$(employee_with_title "Vice President, Sales" "Sales Manager")" --label fuzz --store "$store")
rep_token=$("$bin" employees token "$(employee_with_title "Sales Representative")" --label fuzz --store "$store")

# Port 0 lets the server pick a free port, which it prints; picking one here could race with another process.
"$bin" serve --store "$store" --port 0 >"$work/serve.log" 2>&1 &
server=$!
base=
for _ in $(seq 150); do
    base=$(sed -n 's|^Northwind is serving .* at \(http://[^ ]*[^/]\)/*$|\1|p' "$work/serve.log")
    [ -n "$base" ] && curl -fso /dev/null "$base/api/openapi.json" && break
    kill -0 "$server" 2>/dev/null || { cat "$work/serve.log"; echo "the server did not start" >&2; exit 1; }
    sleep 0.2
done
curl -fso /dev/null "$base/api/openapi.json" || { cat "$work/serve.log"; echo "the server did not answer" >&2; exit 1; }

failed=0
fuzz() {
    echo "== Schemathesis as $1 against $base"
    # Run in the temporary directory: Schemathesis and Hypothesis keep caches (.schemathesis, .hypothesis) in the
    # working directory. Why each option:
    #   --checks all minus positive_data_acceptance: that one wants a 2xx for every schema-valid request, but the
    #     document cannot express the domain rules (a customer code that exists, a product name nobody else has),
    #     so the 422s they answer would fail every run. object_level_authorization needs no exclusion: it does
    #     nothing without a second identity configured.
    #   --continue-on-failure: report every distinct failure of an operation, not only its first.
    #   --seed with --generation-database none: the same cases on every run and machine, none replayed from an
    #     earlier run's database, so a failure reproduces with the seed the summary prints.
    #   --output-sanitize false: the printed curl commands carry the real token, so they replay as they are; the
    #     token dies with the temporary store.
    #   --request-timeout: a hung request is a failure, not a hung CI job.
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of options
    (cd "$work" && "$venv/bin/schemathesis" run "$base/api/openapi.json" \
        --header "Authorization: Bearer $2" \
        --checks all --exclude-checks positive_data_acceptance \
        --phases examples,coverage,fuzzing,stateful \
        --max-examples "$examples" --seed "$seed" --generation-database none \
        --continue-on-failure --output-sanitize false --request-timeout 10 \
        --workers 2 --no-color ${FUZZ_ARGS:-}) || failed=1
}
fuzz "a manager" "$manager_token"
fuzz "a sales representative" "$rep_token"

# A crash or a hang that Schemathesis reported only as connection errors shows here plainly.
if ! kill -0 "$server" 2>/dev/null || ! curl -fso /dev/null --max-time 10 "$base/api/openapi.json"; then
    echo "the server is down or not answering after the fuzzing; its log:" >&2
    tail -50 "$work/serve.log" >&2
    failed=1
fi
exit "$failed"
