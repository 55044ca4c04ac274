# Sourced by scripts/fuzz-api.sh and scripts/fuzz-sync.sh: a pinned Schemathesis, a scratch folder, and a server
# process stopped on exit (the caller sets $server to its PID).
#
# A pinned release in its own virtualenv: checks and their verdicts change between releases, and Schemathesis needs a
# newer Hypothesis than other Python tools may want. Kept in the cache so a second run needs no network.
version=4.32.5
venv=${XDG_CACHE_HOME:-$HOME/.cache}/northwind/schemathesis-$version
if [ ! -x "$venv/bin/schemathesis" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$version"
fi
py=$venv/bin/python

work=$(mktemp -d)
server=
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
