#!/bin/bash
# Builds the Northwind appliance: a Debian 12 UEFI virtual machine with Caddy (HTTPS on the LAN), Avahi
# (northwind.local), SSH and the Northwind packages, as
#   OUT/northwind-appliance.qcow2   (KVM, Proxmox; compressed)
#   OUT/northwind-appliance.ova     (VMware, VirtualBox: OVF 1.0 + streamOptimized VMDK + SHA256 manifest)
#
# usage: sudo scripts/build-appliance.sh [--debs DIR] [--out DIR] [--no-northwind] [--apt-cache DIR]
#                                         [--work DIR] [--disk-size SIZE] [--mirror URL] [--keep-work]
#   --debs DIR       where northwind_*.deb and northwind-sync-server_*.deb are (default: dist/)
#   --out DIR        where the images go (default: dist/)
#   --no-northwind   build without the Northwind packages (the base system only; for testing the image)
#   --apt-cache DIR  keep downloaded .debs there between builds
#   --disk-size SIZE the virtual disk's size (default 16G); the root partition grows to it on first boot
#
# No loop devices and no mounts: mmdebstrap builds the root tree, mkfs.ext4 -d and mtools make the two
# file systems as files, sfdisk partitions a sparse file and dd puts them in place. Needs root (for
# mmdebstrap --mode=root and to keep file ownership in mkfs.ext4 -d) and Debian 12's mmdebstrap,
# e2fsprogs, dosfstools, mtools, fdisk, qemu-utils, xz-utils.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
OVERLAY=$REPO/appliance
DEBS=$REPO/dist
OUT=$REPO/dist
WORK=""
KEEP_WORK=0
NO_NORTHWIND=0
APT_CACHE=""
DISK_SIZE=16G
MIRROR=http://deb.debian.org/debian
SECURITY_MIRROR=http://deb.debian.org/debian-security
ESP_MB=256
CPUS=2
MEMORY_MB=1024

while [ $# -gt 0 ]; do
    case "$1" in
        --debs) DEBS=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --work) WORK=$2; shift 2 ;;
        --keep-work) KEEP_WORK=1; shift ;;
        --no-northwind) NO_NORTHWIND=1; shift ;;
        --apt-cache) APT_CACHE=$2; shift 2 ;;
        --disk-size) DISK_SIZE=$2; shift 2 ;;
        --mirror) MIRROR=$2; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        *) echo "build-appliance: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

say() { printf '\n== build-appliance: %s (%ss)\n' "$*" "$SECONDS"; }
die() { echo "build-appliance: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (mmdebstrap --mode=root, mkfs.ext4 -d keeping file owners)"
for tool in mmdebstrap mkfs.ext4 mkfs.vfat mmd mcopy sfdisk qemu-img xmllint sha256sum tar; do
    command -v "$tool" >/dev/null || die "$tool is missing (apt-get install mmdebstrap e2fsprogs dosfstools mtools fdisk qemu-utils libxml2-utils)"
done

# --- The Northwind packages --------------------------------------------------------------------------
INCLUDE_DEBS=()
VERSION=unreleased
if [ "$NO_NORTHWIND" = 1 ]; then
    echo "build-appliance: WARNING: --no-northwind: the image will NOT contain the Northwind app" >&2
else
    for name in northwind northwind-sync-server; do
        deb=$(ls "$DEBS"/${name}_*_amd64.deb 2>/dev/null | sort -V | tail -n 1 || true)
        [ -n "$deb" ] || die "no ${name}_*_amd64.deb in $DEBS (run scripts/package.sh first, or pass --debs DIR; --no-northwind builds the base image only)"
        INCLUDE_DEBS+=("$(cd "$(dirname "$deb")" && pwd)/$(basename "$deb")")
    done
    VERSION=$(dpkg-deb -f "${INCLUDE_DEBS[0]}" Version)
    echo "build-appliance: Northwind packages: ${INCLUDE_DEBS[*]}"
fi

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
if [ -z "$WORK" ]; then WORK=$(mktemp -d /var/tmp/northwind-appliance.XXXXXX); fi
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
cleanup() { if [ "$KEEP_WORK" = 0 ]; then rm -rf "$WORK"; else echo "build-appliance: work files kept in $WORK"; fi; }
trap cleanup EXIT
ROOTFS=$WORK/rootfs
rm -rf "$ROOTFS"

# Fixed per build: the command line and fstab name the partitions before the disk exists.
ESP_PARTUUID=$(cat /proc/sys/kernel/random/uuid)
ROOT_PARTUUID=$(cat /proc/sys/kernel/random/uuid)
ROOT_FSUUID=$(cat /proc/sys/kernel/random/uuid)
DISK_UUID=$(cat /proc/sys/kernel/random/uuid)
VM_UUID=$(cat /proc/sys/kernel/random/uuid)
ESP_SERIAL=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')
# transparent_hugepage=never: with THP on, khugepaged raises min_free_kbytes to about 45 MB on a 1 GB
# machine (memory the kernel keeps free), for no gain on a small server.
CMDLINE="root=PARTUUID=$ROOT_PARTUUID rw console=ttyS0,115200 console=tty0 quiet transparent_hugepage=never"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$REPO" log -1 --format=%ct 2>/dev/null || date +%s)}

PACKAGES=(
    systemd-sysv udev dbus systemd-resolved systemd-timesyncd libpam-systemd
    linux-image-amd64 initramfs-tools zstd systemd-boot dosfstools
    openssh-server caddy avahi-daemon libnss-mdns ca-certificates
    iproute2 procps less nano
)
INCLUDE=$(IFS=,; echo "${PACKAGES[*]}")
# The Northwind packages go in from inside the chroot (apt there resolves their dependencies from the
# mirror): mmdebstrap --mode=root hands a local .deb to a chrooted dpkg by a host path it cannot see.
NW_HOOKS=()
if [ "${#INCLUDE_DEBS[@]}" -gt 0 ]; then
    NW_HOOKS=(--customize-hook='mkdir -p "$1/tmp/northwind-debs"')
    for deb in "${INCLUDE_DEBS[@]}"; do
        NW_HOOKS+=(--customize-hook="cp '$deb' \"\$1/tmp/northwind-debs/\"")
    done
    NW_HOOKS+=(--customize-hook='chroot "$1" sh -c "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends /tmp/northwind-debs/*.deb"'
               --customize-hook='rm -rf "$1/tmp/northwind-debs"')
fi

CACHE_HOOKS=()
if [ -n "$APT_CACHE" ]; then
    mkdir -p "$APT_CACHE"
    APT_CACHE=$(cd "$APT_CACHE" && pwd)
    CACHE_HOOKS=(
        --setup-hook="mkdir -p \"\$1/var/cache/apt/archives\" && find '$APT_CACHE' -maxdepth 1 -name '*.deb' -exec cp -t \"\$1/var/cache/apt/archives\" {} +"
        --essential-hook="find \"\$1/var/cache/apt/archives\" -maxdepth 1 -name '*.deb' -exec cp -n -t '$APT_CACHE' {} +"
        --customize-hook="find \"\$1/var/cache/apt/archives\" -maxdepth 1 -name '*.deb' -exec cp -n -t '$APT_CACHE' {} +"
    )
fi

# --- 1. The root tree ---------------------------------------------------------------------------------
say "root tree (mmdebstrap)"
mmdebstrap --mode=root --variant=minbase --format=directory \
    --aptopt='APT::Install-Recommends "false"' \
    --include="$INCLUDE" \
    "${CACHE_HOOKS[@]}" \
    "${NW_HOOKS[@]}" \
    --setup-hook="mkdir -p \"\$1/etc/dpkg/dpkg.cfg.d\" \"\$1/etc/initramfs-tools/conf.d\" \"\$1/usr/share/initramfs-tools/modules.d\"" \
    --setup-hook="cp '$OVERLAY/etc/dpkg/dpkg.cfg.d/'* \"\$1/etc/dpkg/dpkg.cfg.d/\"" \
    --setup-hook="cp '$OVERLAY/etc/initramfs-tools/conf.d/northwind' \"\$1/etc/initramfs-tools/conf.d/\"" \
    --setup-hook="cp '$OVERLAY/usr/share/initramfs-tools/modules.d/northwind-appliance' \"\$1/usr/share/initramfs-tools/modules.d/\"" \
    --customize-hook='chroot "$1" update-initramfs -u -k all' \
    bookworm "$ROOTFS" \
    "deb $MIRROR bookworm main" \
    "deb $MIRROR bookworm-updates main" \
    "deb $SECURITY_MIRROR bookworm-security main"

say "configure the root tree"
R=$ROOTFS
cp -a --no-preserve=ownership "$OVERLAY/etc/." "$R/etc/"
cp -a --no-preserve=ownership "$OVERLAY/usr/." "$R/usr/"
sed -e "s|@ROOT_PARTUUID@|$ROOT_PARTUUID|" -e "s|@ESP_PARTUUID@|$ESP_PARTUUID|" "$OVERLAY/fstab.in" > "$R/etc/fstab"
printf '%s\n' "$CMDLINE" > "$R/etc/kernel/cmdline"
printf 'northwind\n' > "$R/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tnorthwind\n::1\t\tlocalhost ip6-localhost ip6-loopback\nff02::1\t\tip6-allnodes\nff02::2\t\tip6-allrouters\n' > "$R/etc/hosts"
ln -sfn ../run/systemd/resolve/stub-resolv.conf "$R/etc/resolv.conf"
mkdir -p "$R/boot/efi" "$R/var/log/journal" "$R/var/lib/northwind-appliance"
units=(systemd-networkd.service systemd-resolved.service systemd-timesyncd.service avahi-daemon.service
       caddy.service ssh.service northwind-firstboot.service northwind-banner.service northwind-banner.path)
for unit in northwind.service northwind-sync-server.service; do
    if [ -e "$R/lib/systemd/system/$unit" ] || [ -e "$R/usr/lib/systemd/system/$unit" ]; then units+=("$unit"); fi
done
systemctl --root="$R" enable "${units[@]}"
# systemd-firstboot would ask for a root password on the console; caddy-api.service (enabled by Debian's
# package) is a second Caddy configured through its admin API, which the appliance does not use.
# systemd-boot-update.service would mount the ESP on every boot; Debian's systemd-boot package runs
# `bootctl update` itself when it is upgraded. e2scrub only works on LVM.
systemctl --root="$R" mask systemd-firstboot.service caddy-api.service systemd-boot-update.service
systemctl --root="$R" disable e2scrub_reap.service e2scrub_all.timer
# No password anywhere: root stays locked ('*' from base-passwd; forced here).
chroot "$R" usermod -p '*' root
grep -q '^root:\*:' "$R/etc/shadow" || die "root is not locked"
# Nothing machine-specific or secret in the image: first boot makes it (northwind-firstboot.service).
rm -f "$R"/etc/ssh/ssh_host_*
printf 'uninitialized\n' > "$R/etc/machine-id"
rm -f "$R/var/lib/dbus/machine-id" "$R/var/lib/systemd/random-seed" "$R/var/lib/systemd/credential.secret"
rm -rf "$R/var/lib/caddy/.local" "$R/var/lib/caddy/.config" "$R/etc/northwind/head-office.env" "$R/var/lib/northwind-sync-server/"* "$R/var/lib/northwind/"*
# Smaller: no package lists or caches (apt update fetches them), no build logs.
rm -rf "$R/var/lib/apt/lists/"* "$R/var/cache/apt/"*.bin "$R/var/cache/apt/archives/"*.deb "$R/var/cache/debconf/"*-old \
       "$R/var/lib/dpkg/"*-old "$R/var/log/"*.log "$R/var/log/apt/"* "$R/tmp/"* "$R/boot/"*.old 2>/dev/null || true
rm -f "$R"/boot/initrd.img-*.bak

KVER=$(ls "$ROOTFS/lib/modules" | sort -V | tail -n 1)
[ -f "$ROOTFS/boot/vmlinuz-$KVER" ] && [ -f "$ROOTFS/boot/initrd.img-$KVER" ] || die "no kernel or initramfs for $KVER"
echo "build-appliance: kernel $KVER, root tree $(du -sh --apparent-size "$ROOTFS" | cut -f1)"

# --- 2. The ESP (FAT32, systemd-boot as the removable-media loader: no firmware boot entry needed) ----
say "ESP (mkfs.vfat + mtools)"
ESP=$WORK/esp.img
rm -f "$ESP"
mkfs.vfat -F 32 -n ESP -i "$ESP_SERIAL" -C "$ESP" $((ESP_MB * 1024)) >/dev/null
SDBOOT=$ROOTFS/usr/lib/systemd/boot/efi/systemd-bootx64.efi
export MTOOLS_SKIP_CHECK=1
mmd -i "$ESP" ::/EFI ::/EFI/BOOT ::/EFI/systemd ::/loader ::/loader/entries ::/northwind "::/northwind/$KVER"
mcopy -i "$ESP" "$SDBOOT" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$ESP" "$SDBOOT" ::/EFI/systemd/systemd-bootx64.efi
mcopy -i "$ESP" "$OVERLAY/esp/loader/loader.conf" ::/loader/loader.conf
printf 'type1\n' > "$WORK/entries.srel"
mcopy -i "$ESP" "$WORK/entries.srel" ::/loader/entries.srel
# The same layout kernel-install (layout=bls, entry token "northwind") writes, so that kernel updates in
# the running appliance add and remove entries next to this one.
mcopy -i "$ESP" "$ROOTFS/boot/vmlinuz-$KVER" "::/northwind/$KVER/linux"
mcopy -i "$ESP" "$ROOTFS/boot/initrd.img-$KVER" "::/northwind/$KVER/initrd.img-$KVER"
cat > "$WORK/entry.conf" <<EOF
title      Northwind appliance (Debian GNU/Linux 12)
version    $KVER
options    $CMDLINE
linux      /northwind/$KVER/linux
initrd     /northwind/$KVER/initrd.img-$KVER
EOF
mcopy -i "$ESP" "$WORK/entry.conf" "::/loader/entries/northwind-$KVER.conf"

# --- 3. The root file system, made from the tree without mounting it ---------------------------------
say "root file system (mkfs.ext4 -d)"
# guide: begin appliance-disk
ROOT_IMG=$WORK/root.img
used_mb=$(du -s --block-size=1M "$ROOTFS" | cut -f1)
root_mb=$(( (used_mb * 13 / 10 + 300 + 63) / 64 * 64 ))
rm -f "$ROOT_IMG"
truncate -s "${root_mb}M" "$ROOT_IMG"
E2FSPROGS_FAKE_TIME=$SOURCE_DATE_EPOCH mkfs.ext4 -q -F -L nw-root -U "$ROOT_FSUUID" -m 1 \
    -E root_owner=0:0,hash_seed="$ROOT_FSUUID" -d "$ROOTFS" "$ROOT_IMG"

# --- 4. The disk: GPT on a sparse file, then the two file systems copied in --------------------------
say "disk (sfdisk + dd)"
DISK=$WORK/disk.raw
rm -f "$DISK"
truncate -s "$DISK_SIZE" "$DISK"
sfdisk --quiet "$DISK" <<EOF
label: gpt
label-id: $DISK_UUID
start=1MiB, size=${ESP_MB}MiB, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, uuid=$ESP_PARTUUID, name="ESP"
start=$((1 + ESP_MB))MiB, size=${root_mb}MiB, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, uuid=$ROOT_PARTUUID, name="root-x86-64"
EOF
dd if="$ESP" of="$DISK" bs=1M seek=1 conv=notrunc,sparse status=none
dd if="$ROOT_IMG" of="$DISK" bs=1M seek=$((1 + ESP_MB)) conv=notrunc,sparse status=none
sfdisk --dump "$DISK"
# guide: end appliance-disk

# --- 5. qcow2 ----------------------------------------------------------------------------------------
say "qcow2"
QCOW2=$OUT/northwind-appliance.qcow2
rm -f "$QCOW2"
qemu-img convert -c -O qcow2 "$DISK" "$QCOW2"

# --- 6. OVA: OVF 1.0 descriptor, streamOptimized VMDK (LSI Logic), SHA256 manifest --------------------
say "OVA"
OVA_DIR=$WORK/ova
rm -rf "$OVA_DIR"
mkdir -p "$OVA_DIR"
VMDK_NAME=northwind-appliance-disk1.vmdk
qemu-img convert -O vmdk -o subformat=streamOptimized,adapter_type=lsilogic,compat6 "$DISK" "$OVA_DIR/$VMDK_NAME"
CAPACITY=$(qemu-img info --output=json "$DISK" | sed -n 's/.*"virtual-size": *\([0-9]*\).*/\1/p')
VMDK_SIZE=$(stat -c %s "$OVA_DIR/$VMDK_NAME")
sed -e "s|@VMDK_NAME@|$VMDK_NAME|g" -e "s|@VMDK_SIZE@|$VMDK_SIZE|g" -e "s|@CAPACITY@|$CAPACITY|g" \
    -e "s|@DISK_UUID@|$DISK_UUID|g" -e "s|@VM_UUID@|$VM_UUID|g" -e "s|@VERSION@|$VERSION|g" \
    -e "s|@BUILD_DATE@|$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)|g" \
    -e "s|@CPUS@|$CPUS|g" -e "s|@MEMORY_MB@|$MEMORY_MB|g" \
    "$OVERLAY/northwind.ovf.in" > "$OVA_DIR/northwind-appliance.ovf"
xmllint --noout "$OVA_DIR/northwind-appliance.ovf"
# guide: begin appliance-ova
# The manifest by hand: OpenSSL 3 would print "SHA2-256(...)", which OVF readers reject.
( cd "$OVA_DIR" && for f in northwind-appliance.ovf "$VMDK_NAME"; do
      printf 'SHA256(%s)= %s\n' "$f" "$(sha256sum "$f" | cut -d' ' -f1)"
  done > northwind-appliance.mf )
OVA=$OUT/northwind-appliance.ova
rm -f "$OVA"
# The descriptor first, the manifest next, then the disk; USTAR, owned by root, reproducible order.
tar -C "$OVA_DIR" --format=ustar --owner=0 --group=0 --numeric-owner --mode=0644 \
    --mtime="@$SOURCE_DATE_EPOCH" -cf "$OVA" northwind-appliance.ovf northwind-appliance.mf "$VMDK_NAME"
# guide: end appliance-ova
python3 "$REPO/scripts/check-ovf.py" "$OVA"

say "done"
ls -l "$QCOW2" "$OVA"
printf 'build-appliance: qcow2 %s MB, ova %s MB, virtual disk %s, Northwind %s, kernel %s, built in %ss\n' \
    $(( $(stat -c %s "$QCOW2") / 1048576 )) $(( $(stat -c %s "$OVA") / 1048576 )) "$DISK_SIZE" "$VERSION" "$KVER" "$SECONDS"
