# Source this on a Linux GPU machine where MLX's CUDA build was unpacked by hand into one
# folder (default /tmp/site: the mlx, mlx-cuda-13 and mlx-lm wheels unzipped together), for
# machines that cannot `pip install "mlx[cuda13]"` themselves:
#
#   . bench/mlx/gpu_env.sh [SITE]
#
# Python then imports that MLX (PYTHONPATH), ksearch-runner-mlx loads its libmlx.so
# (LD_LIBRARY_PATH; the runner may have been linked against another build of the same MLX
# version, whose C++ symbols are the same), and libmlx.so finds the CUDA libraries its RPATH
# expects beside it ($ORIGIN/../../nvidia/...) through a link to the nvidia packages of the
# python3 that holds torch.  Does nothing where SITE has no MLX.
ks_mlx_site=${1:-/tmp/site}
if [ -f "$ks_mlx_site/mlx/lib/libmlx.so" ]; then
	export PYTHONPATH="$ks_mlx_site${PYTHONPATH:+:$PYTHONPATH}"
	export LD_LIBRARY_PATH="$ks_mlx_site/mlx/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	if [ ! -e "$ks_mlx_site/nvidia" ]; then
		ks_nv=$(python3 -c 'import nvidia, os; print(list(nvidia.__path__)[0])' 2>/dev/null)
		[ -n "$ks_nv" ] && ln -s "$ks_nv" "$ks_mlx_site/nvidia"
	fi
	: "${CUDA_HOME:=/usr/local/cuda}"
	export CUDA_HOME
fi
unset ks_mlx_site ks_nv
