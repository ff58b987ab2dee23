#!/usr/bin/env bash
# Copy csrc/selective_scan of github.com/state-spaces/mamba out of a git directory (a clone,
# or the bare copy a mirror keeps) into DEST (default .mamba-src, git-ignored), with the
# commit in DEST/COMMIT, for bench/cuda/selective_scan.py --mamba-src (MAMBA_SRC=DEST for
# bench/cuda/run.sh).  About 120 KB.  The source is mamba's, never part of this repository.
#
#   scripts/mamba_src.sh GIT_DIR [DEST]
set -eu
git_dir=${1:?usage: scripts/mamba_src.sh GIT_DIR [DEST]}
dest=${2:-.mamba-src}
git --git-dir="$git_dir" cat-file -e HEAD:csrc/selective_scan/selective_scan_fwd_kernel.cuh 2>/dev/null || {
	echo "scripts/mamba_src.sh: '$git_dir' has no csrc/selective_scan at HEAD (not state-spaces/mamba?)" >&2
	exit 2
}
rm -rf "$dest"
mkdir -p "$dest"
git --git-dir="$git_dir" archive HEAD csrc/selective_scan | tar -x --strip-components=2 -C "$dest"
git --git-dir="$git_dir" rev-parse HEAD >"$dest/COMMIT"
echo "$dest: csrc/selective_scan at $(cut -c1-12 "$dest/COMMIT"), $(du -sk "$dest" | cut -f1) KB"
