#!/usr/bin/env bash
# MLX's CUDA build for a Linux GPU machine that cannot reach PyPI and takes files over in
# pieces of limited size (a remote runner's per-call copy limit, say):
#
#   bash bench/mlx/stage_wheels.sh DIR [PIECE]        here, with PyPI
#
# downloads the mlx, mlx-cuda-13 and mlx-lm wheels (MLX_VERSION, MLX_LM_VERSION; CPython
# PYVER on manylinux x86_64), unzips them into one site folder, strips libmlx.so of its
# symbol tables (the dynamic symbols stay), packs the folder as tar.xz and splits it into
# pieces of PIECE (default 38M), each alone in DIR/part1, DIR/part2, ... so that each folder
# can be copied on its own.  On the GPU machine, with every part's folder copied over:
#
#   bash bench/mlx/stage_wheels.sh --join SITE PART_DIR...
#   . bench/mlx/gpu_env.sh SITE
#
# joins the pieces in order, unpacks them into SITE (default of gpu_env.sh: /tmp/site) and
# checks that Python imports that MLX.
set -euo pipefail
MLX_VERSION=${MLX_VERSION:-0.32.4}
MLX_LM_VERSION=${MLX_LM_VERSION:-0.32.2}
PYVER=${PYVER:-3.12}

export PYVER
if [ "${1:-}" = "--join" ]; then
	[ $# -ge 3 ] || { echo "usage: $0 --join SITE PART_DIR..." >&2; exit 2; }
	site=$2
	shift 2
	mkdir -p "$site"
	# the pieces in the order of their suffixes (.aa, .ab, ...), wherever each folder is
	cat $(for d in "$@"; do ls "$d"/mlx-site.tar.xz.*; done | awk -F/ '{print $NF "\t" $0}' |
		sort | cut -f2) | xz -dc | tar -x -C "$site"
	# the wheels are for CPython $PYVER: another python3 imports its own MLX, or none
	PYTHONPATH=$site python3 - "$site" <<'PY'
import os, sys
import mlx.core as mx
where = os.path.realpath(mx.__file__)
print("mlx", mx.__version__, "from", where)
if not where.startswith(os.path.realpath(sys.argv[1]) + os.sep):
    sys.exit("this python3 (%d.%d) did not import the unpacked MLX: it needs CPython %s"
             % (sys.version_info[0], sys.version_info[1], os.environ.get("PYVER", "3.12")))
PY
	exit 0
fi

[ $# -ge 1 ] || { echo "usage: $0 DIR [PIECE]   or   $0 --join SITE PART_DIR..." >&2; exit 2; }
out=$1
piece=${2:-38M}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pip download --no-deps --only-binary=:all: --python-version "$PYVER" \
	--platform manylinux_2_35_x86_64 -d "$work/whl" "mlx==$MLX_VERSION" \
	"mlx-cuda-13==$MLX_VERSION" "mlx-lm==$MLX_LM_VERSION" >&2
mkdir -p "$work/site"
for w in "$work"/whl/*.whl; do
	python3 -m zipfile -e "$w" "$work/site"
done
strip --strip-unneeded "$work/site/mlx/lib/libmlx.so"
mkdir -p "$out"
rm -rf "$out"/part*
tar -C "$work/site" -c . | xz -T0 -6 >"$work/mlx-site.tar.xz"
(cd "$work" && split -b "$piece" mlx-site.tar.xz mlx-site.tar.xz.)
i=0
for p in "$work"/mlx-site.tar.xz.*; do
	i=$((i + 1))
	mkdir -p "$out/part$i"
	mv "$p" "$out/part$i/"
done
du -sh "$out"/part* >&2
echo "$i parts in $out; on the GPU machine: bash bench/mlx/stage_wheels.sh --join SITE PART_DIR..." >&2
