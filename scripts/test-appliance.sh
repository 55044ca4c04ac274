#!/bin/bash
# Boots the Northwind appliance under QEMU + OVMF (UEFI) and checks it as a new owner would.
#
# usage: scripts/test-appliance.sh IMAGE.qcow2 [--ova OVA] [--no-ova] [--keep]
#   IMAGE.qcow2  the appliance (dist/northwind-appliance.qcow2); it is never written to: the VM runs on a
#                qcow2 overlay of 20 GiB, larger than the image, so that the root partition must grow
#   --ova OVA    also check the OVA and boot its VMDK, through UEFI from SATA, and on an LSI SCSI
#                controller (default: the .ova next to IMAGE)
#   --no-ova     skip that
#   --keep       keep the work folder (serial logs, overlay) afterwards
# Environment: HTTPS_PORT (28443), HTTP_PORT (28080), SSH_PORT (22222): loopback ports forwarded to the
# VM's 443, 80 and 22; the second appliance (a shop) uses each plus one, the third each plus two;
# CUT_AFTER (2) and UPGRADE_CUT_AFTER (4): seconds into the first run and into `dpkg -i` at which QEMU is
# killed; TEST_WORK: the work folder (default: a new one under /tmp).
#
# The first appliance is set up as head office through its first-run page; a second one, booted from the
# same image, is set up as a shop that joins it through its own first-run page, and reaches it at
# https://10.0.2.100/ (QEMU's guestfwd, one `nc` per connection to the first's forwarded 443), by the IP
# address and the certificate fingerprint a person would read off head office's console. A third one
# loses its power during its first run; head office loses its power during an upgrade of northwind.
#
# KVM when /dev/kvm is usable, else TCG (software) with longer limits. SSH access: a throwaway key made
# here and handed to the VM as the systemd credential ssh.authorized_keys.root in an SMBIOS type 11
# string (systemd 252 imports those; its tmpfiles provision.conf writes /root/.ssh/authorized_keys).
# Nothing in the image is test-only.
# Prints one PASS/FAIL/SKIP line per check, then the measurements; exits 1 if anything failed.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
HTTPS_PORT=${HTTPS_PORT:-28443}
HTTP_PORT=${HTTP_PORT:-28080}
SSH_PORT=${SSH_PORT:-22222}
IMAGE=""
OVA=""
NO_OVA=0
KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --ova) OVA=$2; shift 2 ;;
        --no-ova) NO_OVA=1; shift ;;
        --keep) KEEP=1; shift ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) echo "test-appliance: unknown option $1" >&2; exit 2 ;;
        *) IMAGE=$1; shift ;;
    esac
done
[ -n "$IMAGE" ] && [ -f "$IMAGE" ] || { echo "usage: $0 IMAGE.qcow2 [--ova OVA] [--no-ova] [--keep]" >&2; exit 2; }
IMAGE=$(cd "$(dirname "$IMAGE")" && pwd)/$(basename "$IMAGE")
if [ -z "$OVA" ] && [ "$NO_OVA" = 0 ]; then
    OVA=$(dirname "$IMAGE")/northwind-appliance.ova
    [ -f "$OVA" ] || OVA=""
fi

OVMF_CODE=/usr/share/OVMF/OVMF_CODE_4M.fd
OVMF_VARS=/usr/share/OVMF/OVMF_VARS_4M.fd
for f in "$OVMF_CODE" "$OVMF_VARS"; do [ -f "$f" ] || { echo "test-appliance: $f missing (apt-get install ovmf)" >&2; exit 2; }; done
for tool in qemu-system-x86_64 qemu-img curl ssh ssh-keygen openssl jq nc; do
    command -v "$tool" >/dev/null || { echo "test-appliance: $tool missing" >&2; exit 2; }
done

WORK=${TEST_WORK:-$(mktemp -d /tmp/northwind-appliance-test.XXXXXX)}
mkdir -p "$WORK"
QPID=""
SHOP_QPID=""
MAIN_STATE=()
NIC_EXTRA=""
cleanup() {
    if [ -n "$QPID" ] && kill -0 "$QPID" 2>/dev/null; then kill "$QPID" 2>/dev/null; wait "$QPID" 2>/dev/null; fi
    if [ -n "$SHOP_QPID" ] && kill -0 "$SHOP_QPID" 2>/dev/null; then kill "$SHOP_QPID" 2>/dev/null; wait "$SHOP_QPID" 2>/dev/null; fi
    # Head office's QEMU while a second or third appliance is the current one
    main=${MAIN_STATE[0]:-}
    if [ -n "$main" ] && kill -0 "$main" 2>/dev/null; then kill "$main" 2>/dev/null; wait "$main" 2>/dev/null; fi
    if [ "$KEEP" = 0 ]; then rm -rf "$WORK"; else echo "test-appliance: work folder kept: $WORK"; fi
}
trap cleanup EXIT

# KVM needs /dev/kvm and hardware virtualisation (kvm_intel or kvm_amd): a /dev/kvm served by kvm_pvm
# (PVM, nested virtualisation without VMX) runs only PVM-aware guest kernels, and OVMF dies there at its
# first x87 instruction. APPLIANCE_ACCEL=kvm|tcg overrides the choice.
ACCEL=${APPLIANCE_ACCEL:-}
if [ -z "$ACCEL" ]; then
    if [ -r /dev/kvm ] && [ -w /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then
        ACCEL=kvm
    else
        ACCEL=tcg
        [ -e /dev/kvm ] && echo "test-appliance: /dev/kvm is there but without kvm_intel/kvm_amd ($(ls /sys/module | grep -E '^kvm' | tr '\n' ' ')): software emulation"
    fi
fi
if [ "$ACCEL" = kvm ]; then
    BOOT_LIMIT=180; CPU=host; ACCEL_ARGS=(-accel kvm)
else
    BOOT_LIMIT=1200; CPU=max; ACCEL_ARGS=(-accel tcg,thread=multi)
fi
echo "test-appliance: accelerator $ACCEL (boot limit ${BOOT_LIMIT}s), work folder $WORK"

PASSES=0; FAILS=0; SKIPS=0
pass() { PASSES=$((PASSES + 1)); echo "PASS: $*"; }
fail() { FAILS=$((FAILS + 1)); echo "FAIL: $*"; }
skip() { SKIPS=$((SKIPS + 1)); echo "SKIP: $*"; }
check() { local what=$1; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

ssh-keygen -q -t ed25519 -N '' -C test-appliance -f "$WORK/id" || exit 2
SSH_OPTS=(-i "$WORK/id" -o IdentitiesOnly=yes -o BatchMode=yes -o ConnectTimeout=5
          -o StrictHostKeyChecking=no -o UserKnownHostsFile="$WORK/known_hosts" -o LogLevel=ERROR)
vm() { ssh "${SSH_OPTS[@]}" -p "$SSH_PORT" root@127.0.0.1 "$@"; }  # the VM whose ports are current

# start_vm NAME DRIVE_ARGS...: starts QEMU in the background; QPID, T0 and SERIAL are set.
start_vm() {
    local name=$1; shift
    SERIAL=$WORK/serial-$name.log
    rm -f "$WORK/known_hosts"   # a new VM has new host keys; the identity checks compare them explicitly
    T0=$(now)
    qemu-system-x86_64 -machine q35 "${ACCEL_ARGS[@]}" -cpu "$CPU" -smp 2 -m 1024 \
        -drive if=pflash,format=raw,unit=0,readonly=on,file="$OVMF_CODE" \
        -drive if=pflash,format=raw,unit=1,file="$WORK/vars-$name.fd" \
        "$@" \
        -nic "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:$HTTPS_PORT-:443,hostfwd=tcp:127.0.0.1:$HTTP_PORT-:80,hostfwd=tcp:127.0.0.1:$SSH_PORT-:22$NIC_EXTRA" \
        -smbios "type=11,value=io.systemd.credential:ssh.authorized_keys.root=$(cat "$WORK/id.pub")" \
        -display none -serial file:"$SERIAL" -monitor none \
        >"$WORK/qemu-$name.log" 2>&1 &
    QPID=$!
}

https_code() { # PATH [extra curl args]: the HTTP status through Caddy, 000 when nothing answers
    local path=$1; shift
    curl -sk -o /dev/null -w '%{http_code}' --max-time 5 --resolve "northwind.local:$HTTPS_PORT:127.0.0.1" \
        "$@" "https://northwind.local:$HTTPS_PORT$path" 2>/dev/null
}

# wait_https: until Caddy completes a TLS handshake and answers (any status); sets T_HTTPS.
wait_https() {
    local deadline=$(( $(date +%s) + BOOT_LIMIT ))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        kill -0 "$QPID" 2>/dev/null || { echo "test-appliance: QEMU exited; see $WORK/qemu-*.log" >&2; return 1; }
        if [ "$(https_code /)" != 000 ]; then T_HTTPS=$(elapsed "$T0" "$(now)"); return 0; fi
        sleep 0.5
    done
    return 1
}

wait_ssh() {
    local deadline=$(( $(date +%s) + BOOT_LIMIT ))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        kill -0 "$QPID" 2>/dev/null || return 1
        vm true 2>/dev/null && return 0
        sleep 1
    done
    return 1
}

# An HTTP status from inside the VM (the image has no curl): vm_http PORT PATH
vm_http() {
    vm "exec 3<>/dev/tcp/127.0.0.1/$1 && printf 'GET $2 HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3 && head -n 1 <&3 | cut -d' ' -f2" 2>/dev/null
}

# The web app as a browser on the LAN uses it, through Caddy: web PORT JAR PATH [curl args...] prints the
# body; web_status the same but prints "STATUS LOCATION".
web() {
    local port=$1 jar=$2 path=$3; shift 3
    curl -sk --max-time 60 -c "$jar" -b "$jar" --resolve "northwind.local:$port:127.0.0.1" "$@" "https://northwind.local:$port$path"
}
web_status() {
    local port=$1 jar=$2 path=$3; shift 3
    curl -sk --max-time 120 -o "$WORK/last.html" -w '%{http_code} %{redirect_url}' -c "$jar" -b "$jar" \
        --resolve "northwind.local:$port:127.0.0.1" "$@" "https://northwind.local:$port$path"
}
# first_run PORT JAR FIELD=VALUE...: posts the first-run form with the page's token; prints the status.
first_run() {
    local port=$1 jar=$2; shift 2
    local csrf args=()
    csrf=$(web "$port" "$jar" /setup | sed -n 's/.*name="_csrf" value="\([^"]*\)".*/\1/p' | head -n 1)
    for field in "$@"; do args+=(--data-urlencode "$field"); done
    web_status "$port" "$jar" /setup --data-urlencode "_csrf=$csrf" "${args[@]}"
}
# sign_in PORT JAR LOGIN PASSWORD: prints the status and where it leads
sign_in() {
    local csrf
    csrf=$(web "$1" "$2" /signin | sed -n 's/.*name="_csrf" value="\([^"]*\)".*/\1/p' | head -n 1)
    web_status "$1" "$2" /signin --data-urlencode "_csrf=$csrf" --data-urlencode "login=$3" --data-urlencode "password=$4"
}
# api PORT TOKEN METHOD PATH [JSON]: the JSON API with a bearer token; prints the body, then the status
# on a line of its own.
api() {
    local port=$1 token=$2 method=$3 path=$4 body=${5:-}
    if [ -n "$body" ]; then
        curl -sk --max-time 60 -X "$method" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
            --data "$body" -w '\n%{http_code}' --resolve "northwind.local:$port:127.0.0.1" "https://northwind.local:$port$path"
    else
        curl -sk --max-time 60 -X "$method" -H "Authorization: Bearer $token" \
            -w '\n%{http_code}' --resolve "northwind.local:$port:127.0.0.1" "https://northwind.local:$port$path"
    fi
}
status_of() { tail -n 1; }
body_of() { sed '$d'; }

# wait_app: until /healthz answers 200 through Caddy; sets T_APP. Gives up early when northwind.service
# keeps failing (systemd restarts it), and shows why.
wait_app() {
    local deadline=$(( $(date +%s) + BOOT_LIMIT )) i=0 restarts
    while [ "$(date +%s)" -lt "$deadline" ]; do
        if [ "$(https_code /healthz)" = 200 ]; then T_APP=$(elapsed "$T0" "$(now)"); return 0; fi
        i=$((i + 1))
        if [ $((i % 20)) = 0 ]; then
            restarts=$(vm 'systemctl show -P NRestarts northwind.service' 2>/dev/null)
            if [ "${restarts:-0}" -ge 3 ]; then
                echo "test-appliance: northwind.service restarted $restarts times:"
                vm 'journalctl -b -u northwind.service --no-pager -n 8' | sed 's/^/    /'
                return 1
            fi
        fi
        sleep 0.5
    done
    return 1
}

stop_vm() { # clean power-off over SSH, else kill
    vm systemctl poweroff >/dev/null 2>&1
    for _ in $(seq 60); do kill -0 "$QPID" 2>/dev/null || break; sleep 1; done
    if kill -0 "$QPID" 2>/dev/null; then kill "$QPID"; fi
    wait "$QPID" 2>/dev/null
    QPID=""
}

# The identity of this machine: what first boot made and a reboot must keep.
identity() {
    vm 'cat /etc/machine-id; ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub | cut -d" " -f2;
        sha256sum /etc/northwind/head-office.env | cut -d" " -f1;
        sha256sum /var/lib/caddy/.local/share/caddy/pki/authorities/local/root.crt | cut -d" " -f1'
}

# =====================================================================================================
echo "== 1. first boot of $IMAGE"
cp "$OVMF_VARS" "$WORK/vars-main.fd"
qemu-img create -q -f qcow2 -b "$IMAGE" -F qcow2 "$WORK/run.qcow2" 20G || exit 2
start_vm main -drive file="$WORK/run.qcow2",if=virtio,format=qcow2

if wait_https; then pass "HTTPS answers on 443 (first boot: ${T_HTTPS}s from power-on)"; else
    fail "HTTPS did not answer within ${BOOT_LIMIT}s"; tail -n 40 "$SERIAL"; exit 1; fi
FIRST_BOOT_HTTPS=$T_HTTPS
check "SSH with the key from the SMBIOS credential" wait_ssh

HAS_APP=0
if vm 'dpkg -s northwind >/dev/null 2>&1'; then HAS_APP=1; fi
if [ "$HAS_APP" = 1 ]; then
    if wait_app; then pass "/healthz answers 200 through Caddy (${T_APP}s from power-on)"; else fail "/healthz through Caddy"; fi
    FIRST_BOOT_APP=${T_APP:-}
    code=$(https_code /readyz); [ "$code" = 200 ] && pass "/readyz 200" || fail "/readyz answered $code"
else
    skip "the image has no northwind package (built with --no-northwind): /healthz, /readyz, first-run and unit checks skipped"
fi

state=$(vm 'systemctl is-system-running --wait' 2>/dev/null)
[ "$state" = running ] && pass "systemctl is-system-running: running" || fail "systemctl is-system-running: $state"
failed=$(vm 'systemctl --failed --no-legend --plain' 2>/dev/null)
[ -z "$failed" ] && pass "no failed units" || fail "failed units: $failed"
for unit in caddy avahi-daemon ssh systemd-networkd systemd-resolved northwind-firstboot; do
    s=$(vm "systemctl is-active $unit" 2>/dev/null)
    [ "$s" = active ] && pass "$unit is active" || fail "$unit is $s"
done
if [ "$HAS_APP" = 1 ]; then
    for unit in northwind northwind-sync-server; do
        s=$(vm "systemctl is-active $unit" 2>/dev/null)
        [ "$s" = active ] && pass "$unit is active" || fail "$unit is $s"
        exposure=$(vm "systemd-analyze security $unit.service 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: *\([0-9.]*\).*/\1/p'")
        if [ -n "$exposure" ] && awk -v e="$exposure" 'BEGIN { exit !(e <= 4.0) }'; then
            pass "systemd-analyze security $unit.service: exposure $exposure (<= 4.0)"
        else fail "systemd-analyze security $unit.service: exposure '${exposure}' (must be <= 4.0)"; fi
    done
fi
errors=$(vm 'journalctl -b -p err --no-pager -q' 2>/dev/null)
[ -z "$errors" ] && pass "no error-level journal entries this boot" || { echo "NOTE: error-level journal entries:"; echo "$errors" | sed 's/^/    /'; }

# HTTPS and HTTP as a browser on the LAN sees them
curl -s --max-time 5 -o "$WORK/ca.crt" --resolve "northwind.local:$HTTP_PORT:127.0.0.1" "http://northwind.local:$HTTP_PORT/ca.crt"
if openssl x509 -in "$WORK/ca.crt" -noout 2>/dev/null; then
    CA_FP=$(openssl x509 -in "$WORK/ca.crt" -noout -fingerprint -sha256 | cut -d= -f2)
    pass "http://northwind.local/ca.crt serves the local CA root ($(openssl x509 -in "$WORK/ca.crt" -noout -subject | sed 's/^subject=//'))"
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$WORK/ca.crt" \
        --resolve "northwind.local:$HTTPS_PORT:127.0.0.1" "https://northwind.local:$HTTPS_PORT/")
    [ "$code" != 000 ] && pass "https://northwind.local verifies against that CA (no -k; status $code)" \
        || fail "https://northwind.local does not verify against /ca.crt"
else
    fail "http://northwind.local/ca.crt is not a certificate"; CA_FP=""
fi
redirect=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' --max-time 5 \
    --resolve "northwind.local:$HTTP_PORT:127.0.0.1" "http://northwind.local:$HTTP_PORT/orders?x=1")
case "$redirect" in
    "308 https://northwind.local/orders?x=1"|"301 https://northwind.local/orders?x=1") pass "port 80 redirects: $redirect" ;;
    *) fail "port 80 does not redirect to https: '$redirect'" ;;
esac
redirect=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' --max-time 5 "http://127.0.0.1:$HTTP_PORT/")
case "$redirect" in 30[178]\ https://127.0.0.1/) pass "port 80 by IP redirects: $redirect" ;; *) fail "port 80 by IP: '$redirect'" ;; esac
code=$(curl -sk -o /dev/null -w '%{http_code}' --max-time 5 "https://127.0.0.1:$HTTPS_PORT/")
[ "$code" != 000 ] && pass "https://<IP> (no SNI) answers with the northwind.local certificate (default_sni; status $code)" \
    || fail "https://<IP> (no SNI) does not answer"
for path in /metrics /metrics/ /METRICS /metrics?x=1; do
    code=$(https_code "$path")
    [ "$code" = 404 ] && pass "$path is 404 from outside" || fail "$path answered $code from outside (must be 404)"
done
if [ "$HAS_APP" = 1 ]; then
    inside=$(vm_http 8080 /metrics)
    [ "$inside" = 200 ] && pass "/metrics answers on the VM's loopback" || fail "/metrics on the VM's loopback answered $inside"
fi

# Banner and first boot
banner=$(vm 'cat /etc/issue.d/50-northwind.issue' 2>/dev/null)
echo "$banner" | sed 's/^/    | /'
if echo "$banner" | grep -q 'https://northwind.local/' && echo "$banner" | grep -qF 'https://\4/' \
    && echo "$banner" | grep -q 'First-run setup'; then
    pass "console banner (/etc/issue.d -> /run) has the address and the first-run state"
else fail "console banner"; fi
banner_fp=$(echo "$banner" | grep -oE '([0-9A-F]{2}:){15}[0-9A-F]{2}' | tr '\n' ':' | sed 's/:$//')
[ -n "$CA_FP" ] && [ "$banner_fp" = "$CA_FP" ] && pass "banner fingerprint = /ca.crt's SHA-256 fingerprint" \
    || fail "banner fingerprint '$banner_fp' != '$CA_FP'"
grep -q 'First-run setup' "$SERIAL" && pass "the banner reached the serial console's login prompt" \
    || skip "banner not seen on the serial console yet (agetty prints it at the prompt)"
root_locked=$(vm "passwd -S root | cut -d' ' -f2")
[ "$root_locked" = L ] && pass "root has no password (locked)" || fail "root password state: $root_locked"
pwauth=$(vm "sshd -T | grep -i '^passwordauthentication'")
[ "$pwauth" = "passwordauthentication no" ] && pass "sshd: $pwauth" || fail "sshd: $pwauth"
root_bytes=$(vm 'findmnt -bno SIZE /')
if [ "${root_bytes:-0}" -gt $((18 * 1024 * 1024 * 1024)) ]; then
    pass "root file system grew to the 20 GiB disk ($((root_bytes / 1048576)) MiB)"
else fail "root file system did not grow: ${root_bytes:-?} bytes"; fi
# Kernel updates: kernel-install (layout=bls, entry token northwind) must write a systemd-boot entry on
# the ESP with the appliance's command line. Re-adding the running kernel does what an update does; the
# reboot below then boots from the entry it wrote.
entry=$(vm 'k=$(uname -r); kernel-install add "$k" "/boot/vmlinuz-$k" "/boot/initrd.img-$k" >/dev/null 2>&1 &&
            cat "/boot/efi/loader/entries/northwind-$k.conf"')
if echo "$entry" | grep -q "^options.*root=PARTUUID=" && echo "$entry" | grep -q '^linux */northwind/'; then
    pass "kernel-install writes a boot entry like the image's (checked again by the reboot)"
else fail "kernel-install: entry was: $entry"; fi
ID1=$(identity)
vm 'echo "kept $(date +%s)" > /var/lib/northwind-appliance/test-data; sync'
TOKEN=$(vm 'cat /var/lib/northwind-appliance/test-data')

# Idle memory, once the boot has settled
sleep 20
mem=$(vm "awk '/^MemTotal/ { t = \$2 } /^MemAvailable/ { a = \$2 } END { printf \"%d %d\", (t - a) / 1024, t / 1024 }' /proc/meminfo")
IDLE_USED_MB=${mem% *}
vm 'free -m' | sed 's/^/    /'
if [ "${IDLE_USED_MB:-999}" -lt 250 ]; then pass "idle memory in use (MemTotal - MemAvailable): ${IDLE_USED_MB} MB (< 250)"
else fail "idle memory in use: ${IDLE_USED_MB} MB (limit 250)"; fi

# =====================================================================================================
if [ "$HAS_APP" = 1 ]; then
    echo "== 1b. the first run: head office, then sign-in and an order through the JSON API"
    PASSWORD=amber-lantern-ferry-42
    status=$(web_status "$HTTPS_PORT" "$WORK/anon.jar" /orders)
    case "$status" in 30[237]\ *"/setup"*) pass "/orders leads to the first-run page ($status)" ;; *) fail "/orders before the first run: $status" ;; esac
    code=$(https_code /api/v1/products)
    [ "$code" = 503 ] && pass "the API answers 503 until the first run is done" || fail "the API answered $code before the first run"
    status=$(first_run "$HTTPS_PORT" "$WORK/hq.jar" firstName=Anna lastName=Kowalska login=anna.kowalska \
        password=short passwordAgain=short "siteName=Head office" siteCode=HQ role=headOffice)
    if [ "${status%% *}" = 422 ] && grep -q 'data-field="password"' "$WORK/last.html"; then
        pass "a weak password is refused on the first-run page ($status), naming the field"
    else fail "a weak password: $status"; fi
    status=$(first_run "$HTTPS_PORT" "$WORK/hq.jar" firstName=Anna lastName=Kowalska login=anna.kowalska \
        "password=$PASSWORD" "passwordAgain=$PASSWORD" "siteName=Head office" siteCode=HQ role=headOffice)
    if [ "${status%% *}" = 200 ] && grep -q 'Head office has joined the company' "$WORK/last.html"; then
        pass "head office's first run: done, and joined this machine's sync server"
    else fail "head office's first run: $status"; sed 's/<[^>]*>//g' "$WORK/last.html" | grep -v '^\s*$' | head -n 20; fi
    if [ -n "$CA_FP" ] && grep -qF "$CA_FP" "$WORK/last.html"; then
        pass "head office's page shows shops the certificate fingerprint"
    else fail "head office's page does not show the fingerprint $CA_FP"; fi
    status=$(web_status "$HTTPS_PORT" "$WORK/hq.jar" /)
    [ "${status%% *}" = 200 ] && pass "the first manager is signed in at the end (GET / 200)" || fail "GET / after the first run: $status"
    status=$(web_status "$HTTPS_PORT" "$WORK/anon2.jar" /setup)
    case "$status" in 30[237]\ *signin*) pass "the first-run page is gone: /setup leads to sign-in ($status)" ;; *) fail "/setup after the first run: $status" ;; esac
    status=$(sign_in "$HTTPS_PORT" "$WORK/signin.jar" anna.kowalska "$PASSWORD")
    me=$(web "$HTTPS_PORT" "$WORK/signin.jar" /api/v1/me)
    HQ_EMPLOYEE=$(echo "$me" | jq -r '.employeeID // empty' 2>/dev/null)
    [ -n "$HQ_EMPLOYEE" ] && pass "sign-in as anna.kowalska ($status), /api/v1/me: employee $HQ_EMPLOYEE" || fail "sign-in: $status, /api/v1/me: $me"
    # An API token, as an owner makes one on the console (the CLI finds the store through /etc/northwind/settings.json).
    HQ_TOKEN=$(vm "runuser -u northwind -- northwind employees token ${HQ_EMPLOYEE:-0} --label test-appliance" 2>"$WORK/token.err")
    [ -n "$HQ_TOKEN" ] && pass "northwind employees token on the console" || { fail "no API token: $(cat "$WORK/token.err")"; }
    r=$(api "$HTTPS_PORT" "$HQ_TOKEN" POST /api/v1/categories '{"name":"Beverages"}')
    CATEGORY=$(echo "$r" | body_of | jq -r '.id // empty')
    r=$(api "$HTTPS_PORT" "$HQ_TOKEN" POST /api/v1/products "{\"name\":\"Chai\",\"categoryID\":${CATEGORY:-0},\"unitPrice\":\"18.00\",\"unitsInStock\":40}")
    PRODUCT=$(echo "$r" | body_of | jq -r '.id // empty')
    r=$(api "$HTTPS_PORT" "$HQ_TOKEN" POST /api/v1/customers '{"code":"ALFKI","companyName":"Alfreds Futterkiste"}')
    customer=$(echo "$r" | status_of)
    [ -n "$CATEGORY" ] && [ -n "$PRODUCT" ] && [ "$customer" = 201 ] && pass "a category, a product with 40 in stock and a customer through the API" \
        || fail "catalogue through the API: category '$CATEGORY', product '$PRODUCT', customer $customer"
    r=$(api "$HTTPS_PORT" "$HQ_TOKEN" POST /api/v1/orders "{\"customerCode\":\"ALFKI\",\"lines\":[{\"productID\":${PRODUCT:-0},\"quantity\":3}]}")
    HQ_ORDER=$(echo "$r" | body_of | jq -r '.number // empty')
    r=$(api "$HTTPS_PORT" "$HQ_TOKEN" POST "/api/v1/orders/$HQ_ORDER/execute")
    executed=$(echo "$r" | status_of)
    stock=$(api "$HTTPS_PORT" "$HQ_TOKEN" GET "/api/v1/products/${PRODUCT:-0}" | body_of | jq -r '.unitsInStock // empty')
    [ -n "$HQ_ORDER" ] && [ "$executed" = 200 ] && [ "$stock" = 37 ] && pass "order $HQ_ORDER taken and executed through the API (stock 40 -> $stock)" \
        || fail "order through the API: number '$HQ_ORDER', execute $executed, stock '$stock'"
fi

# =====================================================================================================
echo "== 2. reboot"
T_REBOOT=$(now)
vm 'systemctl reboot' >/dev/null 2>&1
sleep 3
T0=$T_REBOOT
if wait_https; then pass "HTTPS answers after reboot (${T_HTTPS}s from the reboot command)"; else fail "no HTTPS after reboot"; fi
REBOOT_HTTPS=$T_HTTPS
wait_ssh || fail "no SSH after reboot"
ID2=$(identity)
[ -n "$ID1" ] && [ "$ID1" = "$ID2" ] && pass "machine-id, SSH host key, secrets and CA unchanged by the reboot" \
    || { fail "identity changed by the reboot"; diff <(echo "$ID1") <(echo "$ID2"); }
[ "$(vm 'cat /var/lib/northwind-appliance/test-data')" = "$TOKEN" ] && pass "data written before the reboot is kept" \
    || fail "data lost across the reboot"
s=$(vm 'systemctl show -p ActiveState,ConditionResult northwind-firstboot.service | tr "\n" " "')
case "$s" in *ConditionResult=no*) pass "first boot did not run again ($s)" ;; *) fail "first boot ran again: $s" ;; esac
[ "$HAS_APP" = 1 ] && { [ "$(https_code /healthz)" = 200 ] && pass "/healthz after reboot" || fail "/healthz after reboot"; }
if [ "$HAS_APP" = 1 ]; then
    status=$(web_status "$HTTPS_PORT" "$WORK/hq.jar" /api/v1/me)
    [ "${status%% *}" = 200 ] && pass "the session from before the reboot still works (the session secret is kept)" || fail "session after reboot: $status"
    shipped=$(api "$HTTPS_PORT" "$HQ_TOKEN" GET "/api/v1/orders/$HQ_ORDER" | body_of | jq -r '.status // empty')
    [ "$shipped" = shipped ] && pass "order $HQ_ORDER is kept, shipped" || fail "order $HQ_ORDER after reboot: '$shipped'"
    status=$(web_status "$HTTPS_PORT" "$WORK/anon3.jar" /setup)
    case "$status" in 30[237]\ *signin*) pass "after the reboot /setup still leads to sign-in ($status)" ;; *) fail "/setup after reboot: $status" ;; esac
fi

# =====================================================================================================
if [ "$HAS_APP" = 1 ]; then
    echo "== 2b. a second appliance, set up as a shop, joins the first through its first-run page"
    ENROLMENT=$(vm 'runuser -u northwind-sync -- northwind-sync-server enroll --container company --role shop' 2>"$WORK/enrol.err")
    [ -n "$ENROLMENT" ] && pass "a shop's token on head office's console (runuser -u northwind-sync -- northwind-sync-server enroll)" \
        || fail "enroll on head office's console: $(cat "$WORK/enrol.err")"
    MAIN_STATE=("$QPID" "$HTTPS_PORT" "$HTTP_PORT" "$SSH_PORT")
    HQ_HTTPS_PORT=$HTTPS_PORT
    HTTPS_PORT=$((HTTPS_PORT + 1)); HTTP_PORT=$((HTTP_PORT + 1)); SSH_PORT=$((SSH_PORT + 1))
    cp "$OVMF_VARS" "$WORK/vars-shop.fd"
    qemu-img create -q -f qcow2 -b "$IMAGE" -F qcow2 "$WORK/shop.qcow2" 20G
    # The shop reaches head office at 10.0.2.100:443: each connection is one nc to head office's forwarded 443.
    NIC_EXTRA=",guestfwd=tcp:10.0.2.100:443-cmd:nc 127.0.0.1 $HQ_HTTPS_PORT"
    start_vm shop -drive file="$WORK/shop.qcow2",if=virtio,format=qcow2
    NIC_EXTRA=""
    SHOP_QPID=$QPID
    if wait_https && wait_ssh && wait_app; then pass "the second appliance boots (${T_APP}s to /healthz)"; else fail "the second appliance did not boot"; fi
    shop_form=(firstName=Jan lastName=Nowak login=jan.nowak "password=$PASSWORD" "passwordAgain=$PASSWORD"
        "siteName=Oxford shop" siteCode=OXF role=shop server=https://10.0.2.100/ "token=$ENROLMENT")
    wrong_fp="00:${CA_FP#??:}"
    [ "$wrong_fp" = "$CA_FP" ] && wrong_fp="11:${CA_FP#??:}"
    status=$(first_run "$HTTPS_PORT" "$WORK/shop.jar" "${shop_form[@]}" "fingerprint=$wrong_fp")
    if [ "${status%% *}" = 422 ] && grep -q 'has the fingerprint' "$WORK/last.html"; then
        pass "the shop's first run with another fingerprint is refused, saying so ($status)"
    else fail "a wrong fingerprint: $status"; sed 's/<[^>]*>//g' "$WORK/last.html" | grep -v '^\s*$' | head -n 20; fi
    status=$(first_run "$HTTPS_PORT" "$WORK/shop.jar" "${shop_form[@]}" "fingerprint=$CA_FP")
    case "$status" in
        30[237]\ *) pass "the shop's first run joins head office at https://10.0.2.100/ with the same token and the console's fingerprint ($status)" ;;
        *) fail "the shop's first run: $status"; sed 's/<[^>]*>//g' "$WORK/last.html" | grep -v '^\s*$' | head -n 20 ;;
    esac
    me=$(web "$HTTPS_PORT" "$WORK/shop.jar" /api/v1/me)
    SHOP_EMPLOYEE=$(echo "$me" | jq -r '.employeeID // empty' 2>/dev/null)
    SHOP_TOKEN=$(vm "runuser -u northwind -- northwind employees token ${SHOP_EMPLOYEE:-0} --label test-appliance" 2>"$WORK/token.err")
    SHOP_PRODUCT=$(api "$HTTPS_PORT" "$SHOP_TOKEN" GET '/api/v1/products?limit=100' | body_of | jq -r '.items[]? | select(.name == "Chai") | .id')
    [ -n "$SHOP_PRODUCT" ] && pass "the shop has head office's catalogue (Chai is product $SHOP_PRODUCT)" || fail "no Chai at the shop"
    vm "runuser -u northwind -- northwind products receive ${SHOP_PRODUCT:-0} 10 --note test-appliance" >/dev/null 2>"$WORK/receive.err" \
        && pass "10 Chai received at the shop (northwind products receive)" || fail "receive at the shop: $(cat "$WORK/receive.err")"
    r=$(api "$HTTPS_PORT" "$SHOP_TOKEN" POST /api/v1/orders "{\"customerCode\":\"ALFKI\",\"lines\":[{\"productID\":${SHOP_PRODUCT:-0},\"quantity\":2}]}")
    SHOP_ORDER=$(echo "$r" | body_of | jq -r '.number // empty')
    executed=$(api "$HTTPS_PORT" "$SHOP_TOKEN" POST "/api/v1/orders/$SHOP_ORDER/execute" | status_of)
    [ -n "$SHOP_ORDER" ] && [ "$executed" = 200 ] && pass "order $SHOP_ORDER taken and executed at the shop" \
        || fail "order at the shop: '$SHOP_ORDER', execute $executed: $(echo "$r" | body_of | head -c 300)"
    reached=""
    for _ in $(seq 120); do
        r=$(api "$HQ_HTTPS_PORT" "$HQ_TOKEN" GET "/api/v1/orders/$SHOP_ORDER")
        if [ "$(echo "$r" | status_of)" = 200 ] && [ "$(echo "$r" | body_of | jq -r .status)" = shipped ]; then reached=1; break; fi
        sleep 2
    done
    [ -n "$reached" ] && pass "the shop's order $SHOP_ORDER reached head office, shipped" || fail "the shop's order did not reach head office: $r"
    stop_vm
    SHOP_QPID=""
    QPID=${MAIN_STATE[0]}; HTTPS_PORT=${MAIN_STATE[1]}; HTTP_PORT=${MAIN_STATE[2]}; SSH_PORT=${MAIN_STATE[3]}
    rm -f "$WORK/known_hosts"
fi

# =====================================================================================================
if [ "$HAS_APP" = 1 ]; then
    echo "== 2c. a power cut during the first run (QEMU killed while the demo data loads)"
    MAIN_STATE=("$QPID" "$HTTPS_PORT" "$HTTP_PORT" "$SSH_PORT")
    HTTPS_PORT=$((MAIN_STATE[1] + 2)); HTTP_PORT=$((MAIN_STATE[2] + 2)); SSH_PORT=$((MAIN_STATE[3] + 2))
    cp "$OVMF_VARS" "$WORK/vars-cut.fd"
    qemu-img create -q -f qcow2 -b "$IMAGE" -F qcow2 "$WORK/cut.qcow2" 20G
    start_vm cut -drive file="$WORK/cut.qcow2",if=virtio,format=qcow2
    SHOP_QPID=$QPID
    if wait_https && wait_ssh && wait_app; then pass "a third appliance boots"; else fail "the third appliance did not boot"; fi
    cut_form=(firstName=Ewa lastName=Lis login=ewa.lis "password=$PASSWORD" "passwordAgain=$PASSWORD"
        "siteName=Demo" siteCode=DEMO role=demo)
    echo "    (before the cut, /setup from the LAN answers $(https_code /setup); the store's first-run state: $(vm 'runuser -u northwind -- northwind setup status' 2>&1 | tail -n 1))"
    vm 'ls -la --time-style=full-iso /var/lib/northwind/; cat /proc/sys/kernel/random/boot_id' 2>&1 | sed 's/^/    before the cut | /'
    csrf=$(web "$HTTPS_PORT" "$WORK/cut.jar" /setup | sed -n 's/.*name="_csrf" value="\([^"]*\)".*/\1/p' | head -n 1)
    args=(); for field in "${cut_form[@]}"; do args+=(--data-urlencode "$field"); done
    web_status "$HTTPS_PORT" "$WORK/cut.jar" /setup --data-urlencode "_csrf=$csrf" "${args[@]}" >"$WORK/cut-post.txt" 2>&1 &
    post=$!
    sleep "${CUT_AFTER:-2}"
    kill -9 "$QPID"; wait "$QPID" 2>/dev/null; wait "$post" 2>/dev/null
    echo "    (the first-run request, cut after ${CUT_AFTER:-2}s, saw: $(cat "$WORK/cut-post.txt"))"
    start_vm cut -drive file="$WORK/cut.qcow2",if=virtio,format=qcow2
    SHOP_QPID=$QPID
    if wait_https && wait_ssh && wait_app; then pass "after a power cut during the first run, the machine boots and serves"; else fail "no service after the cut"; fi
    state=$(vm 'runuser -u northwind -- northwind setup status' 2>&1)
    echo "$state" | sed 's/^/    | /'
    case "$state" in
        *"still to do"*)
            code=$(https_code /setup)
            if [ "$code" = 403 ]; then pass "the first run is offered again, but not to the LAN on this new boot (/setup $code)"
            else
                fail "after the cut /setup from the LAN answered $code (expected 403 until reopened)"
                vm 'journalctl --list-boots --no-pager; cat /proc/sys/kernel/random/boot_id; ls -la --time-style=full-iso /var/lib/northwind/; journalctl -b -1 -u northwind --no-pager -o short-monotonic | tail -n 60; journalctl -b 0 -u northwind --no-pager -o short-monotonic | head -n 30' 2>&1 | sed 's/^/    after the cut | /'
            fi
            vm 'runuser -u northwind -- northwind setup reopen' >/dev/null 2>&1 && pass "northwind setup reopen on the console" || fail "setup reopen"
            status=$(first_run "$HTTPS_PORT" "$WORK/cut2.jar" "${cut_form[@]}")
            case "$status" in 30[237]\ *) pass "the first run, offered again, finishes ($status)" ;; *) fail "the first run after the cut: $status" ;; esac
            ;;
        *"is done"*)
            skip "the first run had finished before the cut (CUT_AFTER=${CUT_AFTER:-2} was too late): nothing was cut short"
            ;;
        *) fail "setup status after the cut: $state" ;;
    esac
    status=$(sign_in "$HTTPS_PORT" "$WORK/cut3.jar" ewa.lis "$PASSWORD")
    me=$(web "$HTTPS_PORT" "$WORK/cut3.jar" /api/v1/me | jq -r '.login // empty' 2>/dev/null)
    [ "$me" = ewa.lis ] && pass "ewa.lis signs in after the cut and the finished first run" || fail "sign-in after the cut: $status"
    orders=$(vm "runuser -u northwind -- northwind orders list --json" 2>/dev/null | jq 'if type == "array" then length else (.items | length) end' 2>/dev/null)
    [ "${orders:-0}" -gt 0 ] && pass "the demo store is whole: ${orders} orders" || fail "the demo store after the cut: '${orders}' orders"
    check "a backup of the store after the cut is written and checked (northwind backup create)" \
        vm 'runuser -u northwind -- northwind backup create >/dev/null'
    stop_vm
    SHOP_QPID=""
    QPID=${MAIN_STATE[0]}; HTTPS_PORT=${MAIN_STATE[1]}; HTTP_PORT=${MAIN_STATE[2]}; SSH_PORT=${MAIN_STATE[3]}
    rm -f "$WORK/known_hosts"
fi

# =====================================================================================================
echo "== 3. power cut (QEMU killed) and cold start"
kill -9 "$QPID"; wait "$QPID" 2>/dev/null
start_vm main -drive file="$WORK/run.qcow2",if=virtio,format=qcow2
if wait_https; then pass "HTTPS answers after a power cut (${T_HTTPS}s from power-on)"; else fail "no HTTPS after power cut"; fi
COLD_HTTPS=$T_HTTPS
wait_ssh && [ "$(identity)" = "$ID1" ] && pass "identity kept after the power cut" || fail "identity after the power cut"
state=$(vm 'systemctl is-system-running --wait' 2>/dev/null)
[ "$state" = running ] && pass "after the power cut: running" || fail "after the power cut: $state"
if [ "$HAS_APP" = 1 ] && [ -n "${HQ_ORDER:-}" ]; then
    echo "== 3b. a power cut during an upgrade (QEMU killed while dpkg installs a newer northwind)"
    deb=$(ls "$(dirname "$IMAGE")"/northwind_*_amd64.deb 2>/dev/null | head -n 1)
    if [ -z "$deb" ]; then
        skip "no northwind_*.deb beside the image: the upgrade is not tested"
    else
        # The same binaries as a newer version: what an upgrade does (stop, back up, replace, migrate, start)
        # does not depend on what changed.
        rm -rf "$WORK/v2"; dpkg-deb -R "$deb" "$WORK/v2"
        old_version=$(sed -n 's/^Version: //p' "$WORK/v2/DEBIAN/control")
        new_version="${old_version%-*}.1-1"
        sed -i "s/^Version: .*/Version: $new_version/" "$WORK/v2/DEBIAN/control"
        dpkg-deb -b --root-owner-group "$WORK/v2" "$WORK/northwind_${new_version}_amd64.deb" >/dev/null
        vm 'cat > /root/northwind-upgrade.deb' <"$WORK/northwind_${new_version}_amd64.deb"
        orders_before=$(api "$HTTPS_PORT" "$HQ_TOKEN" GET '/api/v1/orders?limit=1000' | body_of | jq -e '.items | length')
        vm 'sync; nohup dpkg -i /root/northwind-upgrade.deb >/root/upgrade.log 2>&1 </dev/null &'
        sleep "${UPGRADE_CUT_AFTER:-4}"
        kill -9 "$QPID"; wait "$QPID" 2>/dev/null
        start_vm main -drive file="$WORK/run.qcow2",if=virtio,format=qcow2
        if wait_https && wait_ssh; then pass "after a power cut during the upgrade the machine boots"; else fail "no boot after the cut upgrade"; fi
        vm 'systemctl is-system-running --wait' >/dev/null 2>&1
        dpkg_state=$(vm "dpkg-query -W -f='\${db:Status-Abbrev} \${Version}' northwind")
        echo "    (cut after ${UPGRADE_CUT_AFTER:-4}s: dpkg says northwind is '$dpkg_state'; its log: $(vm 'tail -n 3 /root/upgrade.log' 2>/dev/null | tr '\n' ' '))"
        # Before anyone repairs anything: does the shop work? (Reported; the unit is enabled, so systemd starts
        # whichever binary the cut left, and a store is only ever migrated forward inside a transaction.)
        if wait_app; then
            echo "    (before any repair the web app answers, ${T_APP}s from power-on)"
        else
            echo "    (before any repair the web app does not answer)"
        fi
        # Finishing an interrupted dpkg run is what apt tells the owner to do; then the upgrade is whole.
        vm 'dpkg --configure -a >/root/configure.log 2>&1; dpkg -i /root/northwind-upgrade.deb >>/root/configure.log 2>&1' \
            && pass "dpkg --configure -a, then the upgrade again, finishes it" || { fail "finishing the upgrade"; vm 'tail -n 20 /root/configure.log' | sed 's/^/    | /'; }
        version=$(vm "dpkg-query -W -f='\${Version}' northwind")
        [ "$version" = "$new_version" ] && pass "northwind is now $new_version" || fail "northwind is '$version' after finishing the upgrade"
        if wait_app; then pass "the web app answers after the cut upgrade (${T_APP}s)"; else fail "no web app after the cut upgrade"; fi
        orders_after=$(api "$HTTPS_PORT" "$HQ_TOKEN" GET '/api/v1/orders?limit=1000' | body_of | jq -e '.items | length')
        [ "${orders_before:-0}" -gt 0 ] && [ "$orders_before" = "$orders_after" ] && pass "no order lost: $orders_after before and after" \
            || fail "orders before the cut upgrade: '$orders_before', after: '$orders_after'"
        status=$(api "$HTTPS_PORT" "$HQ_TOKEN" GET "/api/v1/orders/$HQ_ORDER" | status_of)
        [ "$status" = 200 ] && pass "order $HQ_ORDER is still there" || fail "order $HQ_ORDER after the cut upgrade: $status"
        backups=$(vm 'runuser -u northwind -- northwind backup list' 2>&1)
        echo "$backups" | sed 's/^/    | /' | head -n 8
        echo "$backups" | grep -q 'pre-upgrade\|nwbackup' && pass "northwind backup list shows the backups" || fail "northwind backup list: $backups"
    fi
fi

stop_vm

# =====================================================================================================
if [ -n "$OVA" ]; then
    # Debian's OVMF has no driver for LSI or PVSCSI controllers (its LSI_SCSI/MPT_SCSI/PVSCSI options are
    # off), so the VMDK is booted twice: through UEFI from SATA (AHCI, as VirtualBox's default), which
    # proves the disk format and the ESP; and with the image's own kernel, initramfs and command line
    # (read from the VMDK's ESP) on an LSI SCSI controller, which proves Linux finds its root there.
    # QEMU has no LSI53C1030 (VMware's and VirtualBox's "LsiLogic", Linux mptspi, which the initramfs
    # holds); its lsi53c895a (sym53c8xx) is the nearest. Its mptsas1068 found no disk under Linux 6.1.
    echo "== 4. the OVA's VMDK ($OVA)"
    python3 "$REPO/scripts/check-ovf.py" "$OVA" && pass "OVA structure (scripts/check-ovf.py)" || fail "OVA structure"
    vmdk=$(tar -tf "$OVA" | grep '\.vmdk$' | head -n 1)
    tar -C "$WORK" -xf "$OVA" "$vmdk"
    qemu-img create -q -f qcow2 -b "$WORK/$vmdk" -F vmdk "$WORK/run-vmdk.qcow2" || fail "qcow2 overlay on the VMDK"
    cp "$OVMF_VARS" "$WORK/vars-vmdk.fd"
    start_vm vmdk -drive file="$WORK/run-vmdk.qcow2",if=none,id=disk0,format=qcow2 -device ide-hd,drive=disk0,bus=ide.0
    if wait_https; then pass "the VMDK boots with UEFI from SATA and serves HTTPS (${T_HTTPS}s from power-on)"; else
        fail "the VMDK did not boot to HTTPS (UEFI, SATA)"; tail -n 30 "$SERIAL"; fi
    VMDK_HTTPS=${T_HTTPS}
    wait_ssh && vm 'systemctl is-system-running --wait' >/dev/null 2>&1
    stop_vm

    # The ESP starts 1 MiB into the disk: copy it out and read the boot entry with mtools.
    qemu-img dd -f vmdk -O raw bs=1M skip=1 count=256 if="$WORK/$vmdk" of="$WORK/esp.raw" 2>/dev/null
    entry=$(MTOOLS_SKIP_CHECK=1 mdir -b -i "$WORK/esp.raw" ::/loader/entries 2>/dev/null | grep '\.conf$' | sort -V | tail -n 1)
    if [ -n "$entry" ] && command -v mcopy >/dev/null; then
        MTOOLS_SKIP_CHECK=1 mtype -i "$WORK/esp.raw" "$entry" > "$WORK/entry.conf"
        kernel=$(awk '$1 == "linux" { print $2 }' "$WORK/entry.conf")
        initrd=$(awk '$1 == "initrd" { print $2 }' "$WORK/entry.conf")
        options=$(sed -n 's/^options *//p' "$WORK/entry.conf" | sed 's/console=tty0//')
        MTOOLS_SKIP_CHECK=1 mcopy -o -i "$WORK/esp.raw" "::$kernel" "$WORK/linux"
        MTOOLS_SKIP_CHECK=1 mcopy -o -i "$WORK/esp.raw" "::$initrd" "$WORK/initrd"
        rm -f "$WORK/run-vmdk.qcow2"
        qemu-img create -q -f qcow2 -b "$WORK/$vmdk" -F vmdk "$WORK/run-vmdk.qcow2"
        cp "$OVMF_VARS" "$WORK/vars-lsi.fd"
        start_vm lsi -kernel "$WORK/linux" -initrd "$WORK/initrd" -append "$options" \
            -device lsi53c895a,id=scsi0 -drive file="$WORK/run-vmdk.qcow2",if=none,id=disk0,format=qcow2 \
            -device scsi-hd,drive=disk0,bus=scsi0.0
        if wait_https; then pass "the VMDK's kernel finds its root on an LSI SCSI controller (lsi53c895a) and serves HTTPS (${T_HTTPS}s)"; else
            fail "no HTTPS with the VMDK on an LSI SCSI controller"; tail -n 30 "$SERIAL"; fi
        LSI_HTTPS=${T_HTTPS}
        if wait_ssh && vm 'lsmod | grep -q "^sym53c8xx"'; then pass "root disk on sym53c8xx (the LSI driver)"; else fail "sym53c8xx not loaded"; fi
        vm 'lsinitramfs /boot/initrd.img-$(uname -r) | grep -q "fusion/mptspi.ko"' && pass "the initramfs holds mptspi (VMware/VirtualBox LsiLogic)" \
            || fail "mptspi is not in the initramfs"
        stop_vm
    else
        skip "no boot entry found on the VMDK's ESP (or mtools missing): LSI boot not tested"
    fi
else
    skip "no OVA given: the VMDK boot is not tested"
fi

# =====================================================================================================
echo
echo "== measurements ($ACCEL)"
echo "power-on -> HTTPS answering, first boot:   ${FIRST_BOOT_HTTPS}s"
[ "$HAS_APP" = 1 ] && echo "power-on -> /healthz 200, first boot:      ${FIRST_BOOT_APP:-?}s"
echo "reboot command -> HTTPS answering:         ${REBOOT_HTTPS}s"
echo "power-on -> HTTPS answering, after a cut:  ${COLD_HTTPS}s"
[ -n "$OVA" ] && echo "power-on -> HTTPS answering, VMDK (SATA):  ${VMDK_HTTPS:-?}s"
[ -n "$OVA" ] && echo "kernel start -> HTTPS, VMDK on LSI SCSI:   ${LSI_HTTPS:-?}s"
echo "idle memory in use (MemTotal-MemAvailable): ${IDLE_USED_MB} MB of 1024 MB"
echo
echo "test-appliance: $PASSES passed, $FAILS failed, $SKIPS skipped"
[ "$FAILS" = 0 ]
