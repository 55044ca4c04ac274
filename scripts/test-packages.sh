#!/usr/bin/env bash
# Installs the Debian packages on a clean Debian 12, booted with systemd in a container, and checks them
# as an operator would: apt install with Debian's own dependencies, services active and answering,
# reload, the hardening score, an upgrade that keeps the data (with its backup), remove and purge.
#
#   scripts/test-packages.sh [--prebuilt DIR] [--dist DIR] [--keep] [--dev-dynamic] [--dev-type-exec]
#
#   --prebuilt DIR   the release binaries to package (default: .build-static/release); the script builds
#                    version VERSION-1 and VERSION-2 of both packages from them with scripts/package.sh
#   --dist DIR       take the packages of those two versions from DIR where they are there already
#                    (e.g. dist/ after scripts/package.sh), and build only the missing ones into it
#   --keep           leave the container's root in the work folder for a look afterwards
#   --dev-dynamic    binaries that need the Swift runtime (a debug build): passed to package.sh, and the
#                    host's /opt/swift runtime is copied into the container. For trying the test out only.
#   --dev-type-exec  binaries that send no READY=1 yet: run the units as Type=exec (a drop-in). Only to
#                    test the rest before sd_notify lands; the real packages must pass without it.
#
# Needs root, mmdebstrap, systemd-container (systemd-nspawn), lintian, and http://deb.debian.org/debian.
# The Debian 12 base root is cached in $NORTHWIND_TEST_CACHE (default /var/cache/northwind-test).
# Prints PASS/FAIL lines; exits 1 if any check failed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
prebuilt="$root/.build-static/release"
dist=""
keep=""
dev_dynamic=""
dev_type_exec=""
while [ $# -gt 0 ]; do
    case "$1" in
        --prebuilt) prebuilt=$(cd "$2" && pwd); shift 2 ;;
        --dist) mkdir -p "$2"; dist=$(cd "$2" && pwd); shift 2 ;;
        --keep) keep=1; shift ;;
        --dev-dynamic) dev_dynamic=1; shift ;;
        --dev-type-exec) dev_type_exec=1; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "test-packages.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

[ "$(id -u)" = 0 ] || { echo "test-packages.sh: run as root (mmdebstrap and systemd-nspawn need it)" >&2; exit 1; }
for tool in mmdebstrap systemd-nspawn nsenter lintian; do
    command -v "$tool" >/dev/null || { echo "test-packages.sh: $tool is missing (apt-get install mmdebstrap systemd-container lintian)" >&2; exit 1; }
done

started=$(date +%s)
base=$(tr -d '[:space:]' <"$root/VERSION")
v1="$base-1"
v2="$base-2"
cache=${NORTHWIND_TEST_CACHE:-/var/cache/northwind-test}
work=$(mktemp -d "${TMPDIR:-/tmp}/northwind-test-packages.XXXXXX")
machine="nwtest$$"
nspawn_pid=""
failures=0

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() { # check DESCRIPTION COMMAND...: PASS or FAIL on the command's status; a failure shows its output
    local what=$1; shift
    if "$@" >"$work/check.out" 2>&1; then pass "$what"; else fail "$what"; tail -15 "$work/check.out" | sed 's/^/  | /'; fi
}

cleanup() {
    if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
        # SIGRTMIN+4 to the container's systemd is a clean poweroff; nspawn exits when it is done.
        kill -s RTMIN+4 "$(leader)" 2>/dev/null || true
        for _ in $(seq 30); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 1; done
        kill "$nspawn_pid" 2>/dev/null || true
        wait "$nspawn_pid" 2>/dev/null || true
    fi
    if [ -n "$keep" ]; then echo "kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# --- The packages: two versions of the same binaries, for the upgrade. ---
dist=${dist:-$work/dist}
for v in "$v1" "$v2"; do
    # The upgrade's version is always made again: one left from an earlier run may hold older binaries.
    if [ "$v" = "$v2" ] || [ ! -f "$dist/northwind_${v}_amd64.deb" ] || [ ! -f "$dist/northwind-sync-server_${v}_amd64.deb" ]; then
        echo "== packaging $v from $prebuilt"
        "$root/scripts/package.sh" --prebuilt "$prebuilt" --version "$v" --out "$dist" ${dev_dynamic:+--dev-dynamic} >/dev/null
    fi
done
ls -l "$dist"/*_{"$v1","$v2"}_amd64.deb

# --- lintian: no errors and no warnings (those we accept are overridden in the package, with a reason). ---
# A --dev-dynamic binary keeps its RUNPATH to /opt/swift, which lintian rightly rejects.
for product in northwind northwind-sync-server; do
    check "lintian --fail-on error,warning ${product}_${v1}_amd64.deb" \
        lintian --fail-on error,warning ${dev_dynamic:+--suppress-tags custom-library-search-path} "$dist/${product}_${v1}_amd64.deb"
done

# --- The fault tests' switches are in debug builds only: a release binary has none of their code, and refuses
# to start with one set rather than ignore it. ---
if [ -z "$dev_dynamic" ]; then
    for product in northwind northwind-sync-server; do
        dpkg-deb -x "$dist/${product}_${v1}_amd64.deb" "$work/unpacked-$product"
    done
    refuses() { # refuses BINARY VARIABLE: exit status 78 and the variable named, before anything else runs
        local status=0
        env "$2=1" "$1" --help >"$work/refuses.out" 2>&1 || status=$?
        [ "$status" = 78 ] && grep -q "$2" "$work/refuses.out"
    }
    check "the release northwind refuses NORTHWIND_CRASH_AT (exit 78)" \
        refuses "$work/unpacked-northwind/usr/bin/northwind" NORTHWIND_CRASH_AT
    check "the release northwind-sync-server refuses NORTHWIND_SYNC_TEST_PLAIN_SEQUENCE (exit 78)" \
        refuses "$work/unpacked-northwind-sync-server/usr/bin/northwind-sync-server" NORTHWIND_SYNC_TEST_PLAIN_SEQUENCE
    check "the release northwind-sync-server refuses NORTHWIND_SYNC_TEST_HOLD_MS (exit 78)" \
        refuses "$work/unpacked-northwind-sync-server/usr/bin/northwind-sync-server" NORTHWIND_SYNC_TEST_HOLD_MS
    check "the release northwind holds no crash point's name (restore-aside-done)" \
        sh -c "! grep -q -a restore-aside-done '$work/unpacked-northwind/usr/bin/northwind'"
    check "the release northwind-sync-server holds no negative control (nextval('plain_change_numbers'))" \
        sh -c "! grep -q -a \"nextval('plain_change_numbers')\" '$work/unpacked-northwind-sync-server/usr/bin/northwind-sync-server'"
fi

# --- A clean Debian 12, cached: minbase plus what an operator's server has (systemd as init, curl, man). ---
include="systemd-sysv,dbus,curl,ca-certificates,man-db"
tarball="$cache/bookworm-minbase-$(echo "$include" | md5sum | cut -c1-8).tar"
if [ ! -s "$tarball" ]; then
    echo "== making the Debian 12 base root (cached in $tarball)"
    mkdir -p "$cache"
    mmdebstrap --quiet --mode=root --variant=minbase --format=tar --include="$include" bookworm "$tarball.part" \
        http://deb.debian.org/debian
    mv "$tarball.part" "$tarball"
fi
rootfs="$work/root"
mkdir "$rootfs"
tar -C "$rootfs" -xf "$tarball"
mkdir "$rootfs/root/pkgs"
cp "$dist"/*_{"$v1","$v2"}_amd64.deb "$rootfs/root/pkgs/"
if [ -n "$dev_dynamic" ]; then
    mkdir -p "$rootfs/opt/swift/usr/lib/swift"
    cp -a /opt/swift/usr/lib/swift/linux "$rootfs/opt/swift/usr/lib/swift/"
fi
# The units give a migration 15 minutes to start; a test need not wait that long for a server that never
# says READY=1 (apt would hang in postinst meanwhile).
for unit in northwind northwind-sync-server; do
    mkdir -p "$rootfs/etc/systemd/system/$unit.service.d"
    printf '[Service]\nTimeoutStartSec=2min\n' >"$rootfs/etc/systemd/system/$unit.service.d/test-timeout.conf"
done
if [ -n "$dev_type_exec" ]; then
    for unit in northwind northwind-sync-server; do
        mkdir -p "$rootfs/etc/systemd/system/$unit.service.d"
        printf '[Service]\nType=exec\n' >"$rootfs/etc/systemd/system/$unit.service.d/dev-type-exec.conf"
    done
fi

# The booted container gets a private network (so its 8080 and 8444 are its own, not the host's), hence
# no Internet: apt fetches the dependencies from Debian first, without PID 1 and with the host's network.
# `apt install ./…deb` later finds them in apt's cache, as if downloaded there and then.
echo "== fetching the packages' dependencies from deb.debian.org"
systemd-nspawn --quiet --register=no --keep-unit -D "$rootfs" --pipe /bin/sh -c \
    "apt-get -qq update && apt-get -qq install --download-only -y /root/pkgs/northwind_${v1}_amd64.deb /root/pkgs/northwind-sync-server_${v1}_amd64.deb" \
    >"$work/download.log" 2>&1 || { cat "$work/download.log"; fail "apt-get update and download of the dependencies"; exit 1; }
check "libsqlite3-0 is not in the clean root (apt must bring it)" \
    test -z "$(ls "$rootfs"/var/lib/dpkg/info/libsqlite3-0* 2>/dev/null)"
check "the dependencies came from Debian: $(cd "$rootfs/var/cache/apt/archives" && ls ./*.deb 2>/dev/null | sed 's#^\./##; s/_.*//' | tr '\n' ' ')" \
    test -n "$(ls "$rootfs"/var/cache/apt/archives/libsqlite3-0_*.deb 2>/dev/null)"

# --- Boot it. ---
echo "== booting the container"
systemd-nspawn --quiet --register=no --keep-unit --private-network -M "$machine" -D "$rootfs" --boot \
    >"$work/console.log" 2>&1 </dev/null &
nspawn_pid=$!
leader() { ps --ppid "$nspawn_pid" -o pid= | head -1 | tr -d ' '; }
inside() { # a command in the booted container, as root, with a clean environment
    nsenter --target "$(leader)" --mount --uts --ipc --net --pid -- \
        /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}
as_northwind() { # a northwind command as the service runs it
    inside runuser -u northwind -- env NORTHWIND_SETTINGS=/etc/northwind/settings.json \
        NORTHWIND_STORE=/var/lib/northwind/northwind.sqlite HOME=/var/lib/northwind northwind "$@"
}
as_sync() {
    inside runuser -u northwind-sync -- env NORTHWIND_SYNC_DATABASE=/var/lib/northwind-sync-server/sync.sqlite \
        NORTHWIND_SYNC_SETTINGS=/etc/northwind/sync-server.json HOME=/var/lib/northwind-sync-server northwind-sync-server "$@"
}
booted=""
for _ in $(seq 60); do
    if [ -n "$(leader)" ] && state=$(inside systemctl is-system-running 2>/dev/null); then booted=1; break; fi
    case "${state:-}" in degraded) booted=1; break ;; esac
    sleep 1
done
if [ -z "$booted" ]; then
    tail -30 "$work/console.log"
    fail "the container boots with systemd-nspawn --boot"
    exit 1
fi
inside timeout 120 systemctl is-system-running --wait >/dev/null 2>&1 || true
pass "the container booted ($(inside systemctl is-system-running 2>/dev/null || true))"

# Waits until a unit is active (Type=notify: once READY=1 came), at most 90 s.
wait_active() {
    local unit=$1 state
    for _ in $(seq 90); do
        state=$(inside systemctl is-active "$unit" 2>/dev/null || true)
        [ "$state" = active ] && return 0
        [ "$state" = failed ] && break
        sleep 1
    done
    inside systemctl status --no-pager "$unit" 2>&1 | tail -15 | sed 's/^/  | /'
    return 1
}
http_code() { # the HTTP status an address answers with, 000 if nothing answers within 60 s
    local code=000
    for _ in $(seq 30); do
        code=$(inside curl -s -o /dev/null -m 10 -w '%{http_code}' "$1" || true)
        [ "$code" != 000 ] && break
        sleep 2
    done
    echo "$code"
}
main_pid() { inside systemctl show -P MainPID "$1"; }
exposure() { # the overall exposure figure systemd-analyze security gives a unit
    inside systemd-analyze security --no-pager "$1" 2>/dev/null | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p'
}

# --- Install, as an operator would. ---
echo "== installing $v1"
if inside timeout 600 apt install -y -q "/root/pkgs/northwind_${v1}_amd64.deb" "/root/pkgs/northwind-sync-server_${v1}_amd64.deb" \
    >"$work/install.log" 2>&1; then
    pass "apt install ./northwind_${v1}_amd64.deb ./northwind-sync-server_${v1}_amd64.deb"
else
    tail -20 "$work/install.log" | sed 's/^/  | /'
    fail "apt install of $v1"
    exit 1
fi
installed() { test "$(inside dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed; }
check "libsqlite3-0 was installed by apt as a dependency" installed libsqlite3-0
check "system user northwind exists" inside id northwind
check "system user northwind-sync exists" inside id northwind-sync

for unit in northwind northwind-sync-server; do
    check "$unit.service is enabled" inside systemctl is-enabled --quiet "$unit"
    check "$unit.service is active" wait_active "$unit"
    check "$unit.service runs as its own user ($(inside systemctl show -P User "$unit"))" \
        test "$(inside ps -o user= -p "$(main_pid "$unit")" 2>/dev/null | tr -d ' ')" != root
done
code=$(http_code http://127.0.0.1:8080/)
check "curl http://127.0.0.1:8080/ answers 302 or 200 (got $code)" test "$code" = 302 -o "$code" = 200
code=$(http_code http://127.0.0.1:8444/)
check "curl http://127.0.0.1:8444/ answers HTTP (got $code)" test "$code" != 000 -a -n "$code"
check "the journal holds northwind's log" test -n "$(inside journalctl -u northwind -o cat --no-pager -q 2>/dev/null | head -1)"
# The system call filter refuses with EPERM: what the runtime is refused shows in the log, not as a crash.
# libdispatch's "Failed to set thread priority" (EACCES) is not the filter: no unprivileged user may do it.
no_refusals() {
    ! inside journalctl -u northwind -u northwind-sync-server -o cat --no-pager -q |
        grep -v 'Failed to set thread priority' | grep -iE 'Operation not permitted|Bad system call|SIGSYS'
}
check "the journal shows no system call the hardening refused" no_refusals

for unit in northwind northwind-sync-server; do
    before=$(main_pid "$unit")
    inside systemctl reload "$unit" >/dev/null 2>&1 || true
    sleep 3
    check "systemctl reload $unit: still active, same process" \
        test "$(inside systemctl is-active "$unit" || true)" = active -a "$(main_pid "$unit")" = "$before"
    score=$(exposure "$unit.service")
    check "systemd-analyze security $unit.service: exposure $score <= 4.0" awk -v s="${score:-99}" 'BEGIN { exit !(s <= 4.0) }'
    check "systemd-analyze verify $unit.service" inside systemd-analyze verify "$unit.service"
done

# --- Data in v1: a customer in the store, an enrolment token on the sync server. ---
# setup.firstRun is on in the shipped settings: the new store starts empty, and the web app leads to setup.
check "the service created the store" inside test -f /var/lib/northwind/northwind.sqlite
first_run_pending() { as_northwind setup status | grep 'still to do'; }
check "setup.firstRun is on: the first run is still to do (northwind setup status)" first_run_pending
check "northwind customers add (as user northwind, the unit's environment)" \
    as_northwind customers add --set code=PKGUP --set companyName="Upgrade Test"
total() { as_northwind "$1" list --json --limit 1000 2>/dev/null | sed -n 's/.*"total" : \([0-9]*\).*/\1/p'; }
products_v1=$(total products)
customers_v1=$(total customers)
check "the store holds data: ${customers_v1:-no} customers, ${products_v1:-no} products" test "${customers_v1:-0}" -gt 0
check "northwind-sync-server enroll (as user northwind-sync)" \
    as_sync enroll --container pkgtest --role hq --site PKGUP
# As an administrator types it, with no environment: the installed settings file names the database.
bare_tokens_list() { inside runuser -u northwind-sync -- northwind-sync-server tokens list --container pkgtest | grep -q PKGUP; }
check "runuser -u northwind-sync -- northwind-sync-server tokens list, bare, finds the service's database" bare_tokens_list


# --- An upgrade whose backup fails stops, and leaves v1 installed and serving. ---
echo "== upgrading to $v2 with the backup made to fail"
inside install -d -o northwind -g northwind -m 0700 /var/lib/northwind/backups
inside touch /var/lib/northwind/backups/pre-upgrade   # a file where the folder must go
if inside timeout 600 apt install -y -q "/root/pkgs/northwind_${v2}_amd64.deb" >"$work/upgrade-refused.log" 2>&1; then
    fail "an upgrade whose pre-upgrade backup fails is refused"
else
    pass "an upgrade whose pre-upgrade backup fails is refused"
fi
check "after the refused upgrade $v1 is still installed" \
    test "$(inside dpkg-query -W -f='${db:Status-Status} ${Version}' northwind)" = "installed $v1"
check "after the refused upgrade northwind.service is active again" wait_active northwind
inside rm /var/lib/northwind/backups/pre-upgrade

# --- Upgrade to v2. ---
echo "== upgrading to $v2"
pid1=$(main_pid northwind)
if inside timeout 600 apt install -y -q "/root/pkgs/northwind_${v2}_amd64.deb" "/root/pkgs/northwind-sync-server_${v2}_amd64.deb" \
    >"$work/upgrade.log" 2>&1; then
    pass "apt install of $v2 over $v1"
else
    tail -20 "$work/upgrade.log" | sed 's/^/  | /'
    fail "apt install of $v2 over $v1"
fi
check "northwind is now $v2" test "$(inside dpkg-query -W -f='${Version}' northwind)" = "$v2"
backup=$(inside sh -c "ls /var/lib/northwind/backups/pre-upgrade/northwind-$v1-to-$v2-*.nwbackup 2>/dev/null | head -1" || true)
check "the pre-upgrade backup exists (${backup:-none})" test -n "$backup"
[ -n "$backup" ] && check "the pre-upgrade backup verifies" as_northwind backup verify "$backup"
sync_backup=$(inside sh -c "ls -d /var/lib/northwind-sync-server/backups/pre-upgrade/sync-$v1-to-$v2-* 2>/dev/null | head -1" || true)
check "the sync server's pre-upgrade backup exists (${sync_backup:-none})" test -n "$sync_backup"
for unit in northwind northwind-sync-server; do
    check "$unit.service is active after the upgrade" wait_active "$unit"
done
check "northwind was restarted by the upgrade" test "$(main_pid northwind)" != "$pid1"
code=$(http_code http://127.0.0.1:8080/)
check "curl http://127.0.0.1:8080/ after the upgrade (got $code)" test "$code" = 302 -o "$code" = 200
products_v2=$(total products)
customers_v2=$(total customers)
check "the products and customers are all there after the upgrade (customers $customers_v1 -> ${customers_v2:-none}, products $products_v1 -> ${products_v2:-none})" \
    test "${products_v2:-x}" = "$products_v1" -a "${customers_v2:-x}" = "$customers_v1"
check "the customer added in $v1 is there after the upgrade" as_northwind customers show PKGUP
token_kept() { as_sync tokens list --container pkgtest | grep PKGUP; }
check "the enrolment token made in $v1 is there after the upgrade" token_kept
backup_folder() { as_northwind settings get backup.directory | grep -x /var/lib/northwind/backups; }
check "backup.directory is /var/lib/northwind/backups" backup_folder

# --- Going back: docs/operations.md's four commands for an upgrade whose migration failed, as written there (apt asks
# before a downgrade; here -y needs --allow-downgrades to say yes). What v2 wrote is gone; v1's data is back. ---
echo "== going back to $v1 with the pre-upgrade backup"
as_northwind customers add --set code=PKGV2 --set companyName="Written after the upgrade" >/dev/null 2>&1 || true
check "a customer written in $v2, before going back" as_northwind customers show PKGV2
if [ -n "$backup" ]; then
    if inside env NORTHWIND_SKIP_PRE_UPGRADE_BACKUP=1 apt install -y -q --allow-downgrades "/root/pkgs/northwind_${v1}_amd64.deb" \
        >"$work/downgrade.log" 2>&1; then
        pass "NORTHWIND_SKIP_PRE_UPGRADE_BACKUP=1 apt install ./northwind_${v1}_amd64.deb"
    else
        tail -20 "$work/downgrade.log" | sed 's/^/  | /'
        fail "the downgrade to $v1"
    fi
    # Installing it started it: the restore needs the store to itself.
    inside systemctl stop northwind
    check "runuser -u northwind -- northwind backup restore --force $backup" \
        inside runuser -u northwind -- northwind backup restore --force "$backup"
    inside systemctl start northwind
    is_version() { test "$(inside dpkg-query -W -f='${Version}' northwind)" = "$1"; }
    check "northwind is $v1 again" is_version "$v1"
    check "northwind.service is active after going back" wait_active northwind
    check "the customers are $v1's again (${customers_v1})" test "$(total customers)" = "$customers_v1"
    check "the customer added in $v1 is there" as_northwind customers show PKGUP
    gone() { ! as_northwind customers show PKGV2 >/dev/null 2>&1; }
    check "the customer written in $v2 is gone with the upgrade" gone
fi

# --- Remove keeps the data; purge deletes it; the users stay. ---
echo "== remove and purge"
inside apt-get remove -y -q northwind northwind-sync-server >"$work/remove.log" 2>&1 || fail "apt remove"
check "apt remove stops the services" test "$(inside systemctl is-active northwind || true)" != active
check "apt remove keeps the store" inside test -f /var/lib/northwind/northwind.sqlite
check "apt remove keeps the sync database" inside test -f /var/lib/northwind-sync-server/sync.sqlite
check "apt remove keeps the settings files" inside test -f /etc/northwind/settings.json -a -f /etc/northwind/sync-server.json
inside apt-get purge -y -q northwind northwind-sync-server >"$work/purge.log" 2>&1 || fail "apt purge"
check "apt purge deletes /var/lib/northwind" inside test ! -e /var/lib/northwind
check "apt purge deletes /var/lib/northwind-sync-server" inside test ! -e /var/lib/northwind-sync-server
check "apt purge deletes /etc/northwind" inside test ! -e /etc/northwind
check "the users stay after purge (Debian policy)" inside id northwind
no_failed_units() { local failed; failed=$(inside systemctl --failed --no-legend --plain); echo "$failed"; test -z "$failed"; }
check "no unit failed" no_failed_units

echo "== $((failures)) failed; $(($(date +%s) - started)) s"
[ "$failures" = 0 ]
