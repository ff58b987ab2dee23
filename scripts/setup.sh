#!/usr/bin/env bash
# Install what ksearch needs to build, on Debian/Ubuntu, only when pkg-config cannot find it.
set -euo pipefail
need=()
have() { pkg-config --exists "$1" 2>/dev/null; }
command -v cc >/dev/null || need+=(build-essential)
# g++ (C++20): the Metal kernels run on the CPU (bench/mlx/metal_cpu.py, tests/cli/t0452-metal-cpu.sh)
command -v g++ >/dev/null || need+=(g++)
command -v cmake >/dev/null || need+=(cmake)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v python3 >/dev/null || need+=(python3)
have libcurl || need+=(libcurl4-openssl-dev)
have sqlite3 || need+=(libsqlite3-dev)
have libfyaml || need+=(libfyaml-dev)
have jansson || need+=(libjansson-dev)
have libseccomp || need+=(libseccomp-dev)
# optional: OpenBLAS, the CPU matmul's library yardstick (tasks/matmul/library.c); without
# it that yardstick is skipped with a note
have openblas || need+=(libopenblas-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >&2
fi

# MLX (optional: the mlx backend).  The CPU build runs MLX's native ops, which CI checks
# against every task's reference; KS_MLX=cuda13 installs the CUDA build instead (Linux with
# an NVIDIA GPU).  pip goes to the python3 on PATH, the one CMake asks for MLX; Debian's
# own python3 refuses pip installs (PEP 668) unless told to.  A failure leaves ksearch
# without the mlx backend, never without a build.
if ! python3 -c "import mlx.core" 2>/dev/null; then
  want="mlx[${KS_MLX:-cpu}]"
  echo "setup: installing $want with pip (the mlx backend)" >&2
  if ! python3 -m pip --version >/dev/null 2>&1; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-pip >&2 || true
  fi
  python3 -m pip install --quiet "$want" >&2 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages "$want" >&2 ||
    echo "setup: could not install $want: ksearch builds without the mlx backend" >&2
fi
# mlx-lm's model code for bench/mlx/mamba_prefill.py and its test (--no-deps: the script
# imports only mlx_lm.models, not the checkpoint loading that needs transformers)
if python3 -c "import mlx.core" 2>/dev/null && ! python3 -c "import importlib.util as u; assert u.find_spec('mlx_lm')" 2>/dev/null; then
  python3 -m pip install --quiet --no-deps "mlx-lm==0.32.2" >&2 2>/dev/null ||
    python3 -m pip install --quiet --no-deps --break-system-packages "mlx-lm==0.32.2" >&2 ||
    echo "setup: could not install mlx-lm: tests/cli/t0465-mlx-prefill.sh is skipped" >&2
fi

# numpy (optional: tasks whose reference is reference.py, and the imported flashinfer-bench
# and KernelBench problems).  Without it those tasks cannot be evaluated; nothing else needs it.
if ! python3 -c "import numpy" 2>/dev/null && python3 -m pip --version >/dev/null 2>&1; then
  echo "setup: installing numpy with pip (Python references)" >&2
  python3 -m pip install --quiet numpy >&2 2>/dev/null ||
    python3 -m pip install --quiet --break-system-packages numpy >&2 ||
    echo "setup: could not install numpy: tasks with reference.py cannot be evaluated" >&2
fi
