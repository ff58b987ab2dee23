#!/usr/bin/env bash
# Install what ksearch needs to build, on Debian/Ubuntu, only when pkg-config cannot find it.
set -euo pipefail
need=()
have() { pkg-config --exists "$1" 2>/dev/null; }
command -v cc >/dev/null || need+=(build-essential)
command -v cmake >/dev/null || need+=(cmake)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v python3 >/dev/null || need+=(python3)
have libcurl || need+=(libcurl4-openssl-dev)
have sqlite3 || need+=(libsqlite3-dev)
have libfyaml || need+=(libfyaml-dev)
have jansson || need+=(libjansson-dev)
have libseccomp || need+=(libseccomp-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >&2
fi
