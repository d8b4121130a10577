#!/usr/bin/env bash
# Builds the documentation of the three libraries (LocalStore, SyncKit, SyncServer) with the
# toolchain's own docc, into .build-docs/<Module>.doccarchive, and fails on any warning docc
# reports (an unresolved symbol or article link, a malformed directive, …) and on any public
# symbol without a documentation comment, printing where.
#
#   scripts/docs.sh            build all three
#   scripts/docs.sh SyncKit    build one
#
# Preview an archive with `docc preview Sources/SyncKit/SyncKit.docc
# --additional-symbol-graph-dir .build-docs/symbol-graphs/SyncKit` after a run.
set -euo pipefail
cd "$(dirname "$0")/.."

output=.build-docs
graphs="$output/symbol-graphs"

# The public symbols live in LocalStoreCore, SQLiteDatabase and SyncEngine; apps import them
# through LocalStore and SyncKit, which re-export them (`@_exported import`). The symbol graph
# of a module leaves re-exported symbols out unless their modules are named here, so each
# library lists the modules it re-exports: its catalog then documents, and links to, exactly
# what `import <Library>` brings.
# (A function rather than an associative array: macOS's bash 3.2 has none.)
reexported_modules() {
    case "$1" in
        LocalStore) echo "LocalStoreCore,SQLiteDatabase" ;;
        SyncKit) echo "LocalStore,LocalStoreCore,SQLiteDatabase,SyncEngine" ;;
        *) echo "" ;;
    esac
}

libraries=("$@")
[ "${#libraries[@]}" -gt 0 ] || libraries=(LocalStore SyncKit SyncServer)
for library in "${libraries[@]}"; do
    case "$library" in
        LocalStore | SyncKit | SyncServer) ;;
        *) echo "docs: unknown library '$library' (LocalStore, SyncKit, SyncServer)" >&2; exit 2 ;;
    esac
done

# The tools of the toolchain that runs `swift`, not of a plugin package.
if [ "$(uname -s)" = "Darwin" ]; then
    docc=$(xcrun --find docc)
    symbolgraph_extract=$(xcrun --find swift-symbolgraph-extract)
    platform_flags=(-sdk "$(xcrun --show-sdk-path)")
else
    toolchain_bin=$(dirname "$(readlink -f "$(command -v swift)")")
    docc="$toolchain_bin/docc"
    symbolgraph_extract="$toolchain_bin/swift-symbolgraph-extract"
    platform_flags=()
fi
target_triple=$(swiftc -print-target-info | sed -n 's/^ *"triple": "\(.*\)",*$/\1/p' | head -n 1)

# The same debug build as `make test` (same scratch path, same flags: scripts/debug-build.sh), so
# after the tests this only checks that everything is up to date. SyncKit brings LocalStore and
# the engine along.
scripts/debug-build.sh --target SyncKit
scripts/debug-build.sh --target SyncServer
modules="$(swift build --show-bin-path)/Modules"
# SyncServer imports libpq through CPostgreSQL: its headers are where pkg-config says.
libpq_includes=()
for flag in $(pkg-config --cflags-only-I libpq 2>/dev/null); do libpq_includes+=(-I "${flag#-I}"); done

failed=()
for library in "${libraries[@]}"; do
    rm -rf "${graphs:?}/$library" "$output/$library.doccarchive"
    mkdir -p "$graphs/$library"
    "$symbolgraph_extract" -module-name "$library" -target "$target_triple" ${platform_flags[@]+"${platform_flags[@]}"} \
        -I "$modules" -I Sources/CSQLite -I Sources/CEpoll -I Sources/CPostgreSQL -I Sources/CLibcurl ${libpq_includes[@]+"${libpq_includes[@]}"} \
        -minimum-access-level public -skip-synthesized-members \
        -experimental-allowed-reexported-modules="$(reexported_modules "$library")" \
        -output-dir "$graphs/$library"

    catalog="Sources/$library/$library.docc"
    echo "docs: $library: docc convert $catalog"
    if ! "$docc" convert "$catalog" \
        --additional-symbol-graph-dir "$graphs/$library" \
        --output-dir "$output/$library.doccarchive" \
        --warnings-as-errors; then
        failed+=("$library")
    fi
done

# docc documents a public symbol without a comment silently; the checker lists them.
echo "docs: checking that every public symbol declared in Sources/ has a documentation comment"
if ! swift scripts/undocumented-symbols.swift "${libraries[@]/#/$graphs/}"; then
    failed+=("undocumented-symbols")
fi

if [ "${#failed[@]}" -gt 0 ]; then
    echo "docs: problems in: ${failed[*]} (each is printed above with its file and line)" >&2
    exit 1
fi
echo "docs: built $(printf '%s.doccarchive ' "${libraries[@]}")in $output/"
