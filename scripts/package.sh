#!/usr/bin/env bash
# Builds the two Debian 12 packages, northwind and northwind-sync-server, from release binaries linked
# with --static-swift-stdlib (no Swift runtime on the target).
#
#   scripts/package.sh [--prebuilt DIR] [--version V] [--out DIR] [--dev-dynamic]
#
#   --prebuilt DIR  take northwind and northwind-sync-server from DIR instead of building them
#   --version V     the full package version (default: the VERSION file, plus -1)
#   --out DIR       where the .debs and the detached debug files go (default: dist/)
#   --dev-dynamic   accept binaries that need the Swift runtime's .so files (a debug build), to try the
#                   packaging out only: such a package runs only where /opt/swift is installed
#
# Needs a Debian 12 host (the Depends lines come from its libraries): dpkg-dev, binutils, chrpath, jq.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
prebuilt=""
version=""
out="$root/dist"
dev_dynamic=""

while [ $# -gt 0 ]; do
    case "$1" in
        --prebuilt) prebuilt=$(cd "$2" && pwd); shift 2 ;;
        --version) version=$2; shift 2 ;;
        --out) mkdir -p "$2"; out=$(cd "$2" && pwd); shift 2 ;;
        --dev-dynamic) dev_dynamic=1; shift ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "package.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

# One source of truth for the version; -1 is the Debian revision of our own packaging.
if [ -z "$version" ]; then
    version="$(tr -d '[:space:]' <"$root/VERSION")-1"
fi
if ! dpkg --validate-version "$version" 2>/dev/null; then
    echo "package.sh: $version is not a valid Debian version" >&2; exit 2
fi

for tool in dpkg-deb dpkg-shlibdeps objcopy strip readelf chrpath jq; do
    command -v "$tool" >/dev/null || { echo "package.sh: $tool is missing (apt-get install dpkg-dev binutils chrpath jq)" >&2; exit 1; }
done
. /etc/os-release
if [ "${ID:-}" != debian ] || [ "${VERSION_ID:-}" != 12 ]; then
    echo "package.sh: the Depends lines come from this machine's libraries, so it must be Debian 12 (this is ${PRETTY_NAME:-unknown})" >&2
    exit 1
fi

products=(northwind northwind-sync-server)

if [ -n "$prebuilt" ]; then
    bin="$prebuilt"
else
    # One build at a time: two concurrent SwiftPM builds on one build folder break each other.
    # --disable-local-rpath: no $ORIGIN RUNPATH, which lintian rejects and nothing needs.
    # guide: begin package-build
    for product in "${products[@]}"; do
        (cd "$root" && swift build -c release --static-swift-stdlib --disable-local-rpath \
            --build-path .build-static --product "$product")
    done
    # guide: end package-build
    # Every other target compiled in release too, as the README's and the docs' `swift build -c release --product`
    # commands build them: a target that only a release build refuses fails here, not on a newcomer's machine.
    # Compiled, not linked: the guide's HTTP client needs FoundationNetworking, which links libcurl, and a static
    # build has no libcurl to link. NorthwindTestSupport is the tests' own (it imports Testing, which exists only
    # in test builds), so it is left to them.
    targets=$(cd "$root" && swift package describe --type json |
        jq -r '.targets[] | select(.type != "test" and .name != "NorthwindTestSupport") | .name')
    for target in $targets; do
        (cd "$root" && swift build -c release --static-swift-stdlib --disable-local-rpath \
            --build-path .build-static --target "$target")
    done
    bin="$root/.build-static/release"
fi
for product in "${products[@]}"; do
    [ -x "$bin/$product" ] || { echo "package.sh: $bin/$product is missing" >&2; exit 1; }
    # A release build refuses the fault tests' switches (exit 78); a debug build, which honours them, is not
    # packaged. (--dev-dynamic packages a debug build on purpose, to try the packaging out.)
    if [ -z "$dev_dynamic" ]; then
        status=0
        NORTHWIND_CRASH_AT=package-check "$bin/$product" --help >/dev/null 2>&1 || status=$?
        if [ "$status" != 78 ]; then
            echo "package.sh: $bin/$product is not a release build (it does not refuse NORTHWIND_CRASH_AT): build with -c release" >&2
            exit 1
        fi
    fi
done

# Reproducible: every timestamp in the packages is the last commit's.
SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct)
export SOURCE_DATE_EPOCH
commit=$(git -C "$root" rev-parse --short HEAD)
umask 022
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/northwind-package.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Only glibc (libc, libm, and the libdl/libpthread stubs), libgcc_s, libstdc++, SQLite and zlib may stay
# dynamic: anything else (a Swift .so, libcurl, libxml2) would not be on a clean Debian 12.
check_libraries() {
    local binary=$1 extra
    if ! ldd "$binary" >/dev/null 2>&1; then
        echo "package.sh: ldd cannot read $binary" >&2; return 1
    fi
    extra=$(ldd "$binary" | awk '{print $1}' |
        grep -vE '^(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|lib(c|m|dl|pthread|gcc_s|stdc\+\+|sqlite3|z)\.so\.[0-9]+)$' || true)
    if [ -n "$extra" ] && [ -n "$dev_dynamic" ]; then
        echo "package.sh: --dev-dynamic: $binary needs $(echo $extra): this package is for trying the packaging out only" >&2
    elif [ -n "$extra" ]; then
        echo "package.sh: $binary needs libraries a clean Debian 12 lacks (not built with --static-swift-stdlib?):" >&2
        echo "$extra" | sed 's/^/  /' >&2
        return 1
    fi
}

# The Depends line from the libraries the binary really links, as Debian 12's shlibs/symbols files say.
shlib_depends() {
    local binary=$1 package=$2 line
    mkdir -p "$work/shlibs-$package/debian"
    printf 'Source: %s\n\nPackage: %s\nArchitecture: amd64\n' "$package" "$package" >"$work/shlibs-$package/debian/control"
    line=$(cd "$work/shlibs-$package" && dpkg-shlibdeps ${dev_dynamic:+--ignore-missing-info} -O -e"$binary" 2>"$work/shlibs-$package/stderr") ||
        { cat "$work/shlibs-$package/stderr" >&2; return 1; }
    echo "${line#shlibs:Depends=}"
}

# A Debian changelog entry for this build (lintian wants one whose version is the package's).
changelog() {
    local package=$1
    printf '%s (%s) bookworm; urgency=medium\n\n  * Built from commit %s.\n\n -- Northwind Team <ops@northwind.invalid>  %s\n' \
        "$package" "$version" "$commit" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")"
}

# The commented example of every setting, made from the binary's own JSON Schema so it cannot drift.
settings_example() {
    local binary=$1
    echo "// Every key /etc/northwind/settings.json can hold, with its default and what it does."
    echo "// JSON has no comments: copy the keys you need, without these // lines, into"
    echo "// /etc/northwind/settings.json. The service's own environment (NORTHWIND_STORE) sets the"
    echo "// store's path, above this file. The schema is settings.schema.json beside this file."
    "$binary" settings schema | jq -r '
        .properties | to_entries | map(
            "  \"\(.key)\": {\n" +
            (.value.properties | to_entries | map(
                "    // \(.value.title): \(.value.description)\n    \"\(.key)\": \(.value.default | tojson)"
            ) | join(",\n")) + "\n  }"
        ) | join(",\n") | "{\n" + . + "\n}"'
}

for product in "${products[@]}"; do
    pkgdir="$root/packaging/$product"
    stage="$work/$product"
    doc="$stage/usr/share/doc/$product"
    mkdir -p "$stage"
    cp -a "$pkgdir/root/." "$stage/"

    # SwiftPM resource bundles (Bundle.module) are looked up beside the executable, as resolved through
    # /proc/self/exe: so the binary lives in /usr/lib/PRODUCT with the bundles it names, and /usr/bin
    # holds a symbolic link to it.
    exe="$stage/usr/lib/$product/$product"
    install -D -m 0755 "$bin/$product" "$exe"
    mkdir -p "$stage/usr/bin"
    ln -s "../lib/$product/$product" "$stage/usr/bin/$product"
    for bundle in "$bin"/*.resources; do
        [ -d "$bundle" ] || continue
        if grep -qF "$(basename "$bundle")" "$exe"; then cp -R "$bundle" "$stage/usr/lib/$product/"; fi
    done
    check_libraries "$exe"
    # A RUNPATH (SwiftPM adds $ORIGIN unless --disable-local-rpath) is a lintian error and useless here.
    if [ -z "$dev_dynamic" ] && readelf -d "$exe" | grep -qE '\((RPATH|RUNPATH)\)'; then
        chrpath -d "$exe" >/dev/null
    fi
    # Strip into the package; keep the debug information beside the .deb (gdb finds it by build id).
    debugfile="$out/${product}_${version}_amd64.debug"
    objcopy --only-keep-debug --compress-debug-sections "$exe" "$debugfile"
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$exe"
    objcopy --add-gnu-debuglink="$debugfile" "$exe"
    chmod 0644 "$debugfile"

    # Documentation: compressed with -n (no name or time inside), as lintian and reproducibility want.
    install -D -m 0644 "$root/packaging/common/copyright" "$doc/copyright"
    changelog "$product" | gzip -9n >"$doc/changelog.Debian.gz"
    mkdir -p "$stage/usr/share/man/man1"
    sed "s/@VERSION@/$version/" "$pkgdir/$product.1" | gzip -9n >"$stage/usr/share/man/man1/$product.1.gz"
    install -D -m 0644 "$pkgdir/lintian-overrides" "$stage/usr/share/lintian/overrides/$product"
    if [ "$product" = northwind ]; then
        mkdir -p "$doc/examples"
        "$exe" settings schema >"$doc/examples/settings.schema.json"
        settings_example "$exe" >"$doc/examples/settings.jsonc"
    fi

    # Control area: the maintainer scripts know their own version (the pre-upgrade backup's name).
    mkdir -p "$stage/DEBIAN"
    for script in preinst postinst prerm postrm; do
        sed "s/@VERSION@/$version/g" "$pkgdir/DEBIAN/$script" >"$stage/DEBIAN/$script"
        chmod 0755 "$stage/DEBIAN/$script"
    done
    install -m 0644 "$pkgdir/DEBIAN/conffiles" "$stage/DEBIAN/conffiles"
    depends=$(shlib_depends "$exe" "$product")
    installed_size=$(du -sk --apparent-size --exclude=DEBIAN "$stage" | cut -f1)
    sed -e "s/@VERSION@/$version/" -e "s/@DEPENDS@/$depends/" -e "s/@INSTALLED_SIZE@/$installed_size/" \
        "$pkgdir/DEBIAN/control.in" >"$stage/DEBIAN/control"
    chmod 0644 "$stage/DEBIAN/control"

    # Modes do not depend on the checkout's umask or on how git stored them.
    find "$stage" -path "$stage/DEBIAN" -prune -o -type d -exec chmod 0755 {} +
    find "$stage" -path "$stage/DEBIAN" -prune -o -type f ! -path "$exe" -exec chmod 0644 {} +
    (cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
    chmod 0644 "$stage/DEBIAN/md5sums"

    dpkg-deb --root-owner-group -Zxz --build "$stage" "$out/${product}_${version}_amd64.deb" >/dev/null
    echo "$out/${product}_${version}_amd64.deb: $(du -h "$out/${product}_${version}_amd64.deb" | cut -f1), installed $installed_size KiB; Depends: $depends"
done
