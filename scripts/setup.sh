#!/usr/bin/env bash
# Install what ksearch needs to build, only when pkg-config cannot find it: with apt on
# Debian/Ubuntu, with Homebrew on macOS (docs/macos.md).
set -euo pipefail
need=()
have() { pkg-config --exists "$1" 2>/dev/null; }
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

linux_packages() {
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
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >&2
  fi
}

# macOS: Apple's clang (the Command Line Tools) and Homebrew's libraries.  Homebrew keeps
# curl and sqlite beside macOS's own ("keg-only"), so pkg-config finds them only through
# their opt/ folders, which CMakeLists.txt adds as well.  No OpenMP: Apple's clang has none
# (kernels run on one core unless given Homebrew's libomp, docs/macos.md).
macos_packages() {
  if ! xcode-select -p >/dev/null 2>&1; then
    echo "setup: no C compiler: run 'xcode-select --install' (Apple's Command Line Tools), then this again" >&2
    exit 1
  fi
  if ! command -v brew >/dev/null; then
    echo "setup: ksearch installs its libraries on macOS with Homebrew: install it from https://brew.sh, then run this again" >&2
    exit 1
  fi
  local prefix
  prefix=$(brew --prefix)
  export PKG_CONFIG_PATH="$prefix/opt/curl/lib/pkgconfig:$prefix/opt/sqlite/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  command -v cmake >/dev/null || need+=(cmake)
  command -v pkg-config >/dev/null || need+=(pkg-config)
  command -v python3 >/dev/null || need+=(python)
  have libcurl || need+=(curl)
  have sqlite3 || need+=(sqlite)
  have libfyaml || need+=(libfyaml)
  have jansson || need+=(jansson)
  if [ ${#need[@]} -gt 0 ]; then
    echo "setup: brew install ${need[*]}" >&2
    brew install "${need[@]}" >&2
  fi
}

case "$(uname -s)" in
Darwin) macos_packages ;;
*) linux_packages ;;
esac

# MLX (optional: the mlx backend).  The CPU build runs MLX's native ops, which CI checks
# against every task's reference; KS_MLX=cuda13 installs the CUDA build instead (Linux with
# an NVIDIA GPU); on macOS plain `mlx` is the Metal build (its mlx-metal wheel carries the
# headers and libmlx.dylib ksearch-runner-mlx builds against).  pip goes to the python3 on
# PATH, the one CMake asks for MLX; Debian's and Homebrew's python3 refuse pip installs
# (PEP 668) unless told to.  A failure leaves ksearch without the mlx backend, never
# without a build.
if ! python3 -c "import mlx.core" 2>/dev/null; then
  want="mlx[${KS_MLX:-cpu}]"
  [ "$(uname -s)" = Darwin ] && want="mlx"
  echo "setup: installing $want with pip (the mlx backend)" >&2
  if ! python3 -m pip --version >/dev/null 2>&1 && command -v apt-get >/dev/null; then
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
