#!/usr/bin/env bash
# Copy ksearch's binaries from a build folder, with the shared libraries they load that a
# bare machine may lack, into one folder to run elsewhere (e.g. a GPU machine that has no
# sqlite3/libfyaml/jansson development packages):
#
#   scripts/pack-binaries.sh BUILD DEST
#
# DEST gets ksearch, ksearch-cc-jail and the runners, and DEST/devlibs the libraries;
# bench/cuda/run.sh (SKIP_BUILD=1 BUILD=DEST) and `. scripts/pack-binaries.sh --install DEST`
# copy the libraries the other machine lacks into /usr/local/lib.  glibc, libstdc++ and
# the CUDA/MLX libraries are left out: the other machine brings its own.
set -euo pipefail
if [ "${1:-}" = --install ]; then
	for f in "$2"/devlibs/*.so*; do
		ldconfig -p | grep -q " $(basename "$f") " || cp -n "$f" /usr/local/lib/
	done
	ldconfig
	exit 0
fi
[ $# -eq 2 ] || { echo "usage: scripts/pack-binaries.sh BUILD DEST | --install DEST" >&2; exit 2; }
build=$1 dest=$2
mkdir -p "$dest/devlibs"
bins=()
for b in ksearch ksearch-cc-jail ksearch-runner ksearch-runner-cuda ksearch-runner-mlx; do
	[ -x "$build/$b" ] && bins+=("$build/$b")
done
[ ${#bins[@]} -gt 0 ] || { echo "pack-binaries: no ksearch binaries in '$build'" >&2; exit 1; }
cp "${bins[@]}" "$dest/"
ldd "${bins[@]}" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
	grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so|libcuda|libcudart|libnvrtc|/mlx[^/]*/' |
	while read -r lib; do cp -L "$lib" "$dest/devlibs/"; done
echo "pack-binaries: ${#bins[@]} binaries, $(ls "$dest/devlibs" | wc -l) libraries in $dest"
