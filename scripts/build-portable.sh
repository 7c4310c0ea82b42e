#!/usr/bin/env bash
# Builds a grove that starts on any x86_64 Linux with glibc 2.17 or later (CentOS 7,
# RHEL/Rocky 8, Ubuntu 20.04, ...): one file to copy onto a login node.
#
# Why this route: glibc symbols are versioned, and a binary linked on a new system asks
# for the newest version of each symbol it uses (this machine's give GLIBC_2.34). zig's
# linker ships stubs for every glibc version, so `cargo zigbuild --target
# x86_64-unknown-linux-gnu.2.17` links against the 2.17 ones; it also compiles the
# bundled SQLite (rusqlite's C code) with `zig cc` for the same target. A musl static
# build would be the other route, but musl's allocator is known to be slow under
# many small allocations (grove makes many), and zig needs neither root nor a sysroot.
#
# Needs: rustup's x86_64-unknown-linux-gnu target (the host one), and
#   pip install ziglang                          # zig, found by cargo-zigbuild as `python3 -m ziglang`
#   cargo install cargo-zigbuild --locked
#
# Usage: scripts/build-portable.sh [GLIBC_VERSION]   (default 2.17)
# Prints the highest GLIBC symbol version the binary needs, its dynamic libraries and its
# size (plain and xz), and fails when the version is above the one asked for.
# Output: target/dist/grove-<version>-x86_64-linux-glibc<GLIBC_VERSION> (and .xz; under
# $CARGO_TARGET_DIR when that is set).
set -euo pipefail

glibc="${1:-2.17}"
triple=x86_64-unknown-linux-gnu
cd "$(dirname "$0")/.."

for tool in cargo-zigbuild objdump; do
    command -v "$tool" >/dev/null || { echo "build-portable: $tool not found (see the top of $0)" >&2; exit 2; }
done
if ! command -v zig >/dev/null && ! python3 -m ziglang version >/dev/null 2>&1; then
    echo "build-portable: zig not found: pip install ziglang" >&2
    exit 2
fi

start=$(date +%s)
cargo zigbuild --locked --release --target "$triple.$glibc" --bin grove
secs=$(( $(date +%s) - start ))

tgt="${CARGO_TARGET_DIR:-target}"
bin="$tgt/$triple/release/grove"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
mkdir -p "$tgt/dist"
out="$tgt/dist/grove-$version-x86_64-linux-glibc$glibc"
cp "$bin" "$out"
xz -9 -T1 -c "$out" > "$out.xz"

need=$(objdump -T "$out" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
libs=$(objdump -p "$out" | awk '/NEEDED/ {print $2}' | tr '\n' ' ')
size=$(stat -c %s "$out")
xsize=$(stat -c %s "$out.xz")

echo "binary:        $out"
echo "build time:    ${secs} s"
echo "highest GLIBC: $need (asked for $glibc)"
echo "needs:         $libs"
echo "size:          $size bytes ($(( size / 1024 / 1024 )) MiB), xz: $xsize bytes ($(( xsize / 1024 / 1024 )) MiB)"
echo "runs here:     $("$out" --version)"

# Highest of the two by version order; the binary passes when that is the one asked for.
if [ "$(printf '%s\n%s\n' "$need" "$glibc" | sort -V | tail -1)" != "$glibc" ]; then
    echo "build-portable: the binary needs GLIBC_$need, above $glibc" >&2
    exit 1
fi
echo "ok: runs on glibc $glibc and later"
