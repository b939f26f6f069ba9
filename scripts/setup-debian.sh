#!/usr/bin/env bash
# Installs what building sparsetc needs on a fresh Debian machine that has the CUDA toolkit
# (nvcc, cuSPARSE, cuBLAS, CCCL) but maybe no GPU. Installs only what is missing. gfortran and
# python3-numpy/python3-scipy are for the tests of the Fortran and Python bindings.
set -euo pipefail

need=()
for pkg in cmake ninja-build g++ libgtest-dev libspdlog-dev zlib1g-dev binutils pkg-config valgrind \
           gfortran python3-numpy python3-scipy; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if ((${#need[@]})); then
  echo "setup: installing ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null 2>&1; then
  for dir in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    [ -x "$dir/nvcc" ] && export PATH="$dir:$PATH" && break
  done
fi
command -v nvcc >/dev/null 2>&1 || { echo "setup: the CUDA toolkit (nvcc) is required" >&2; exit 1; }
echo "setup: $(cmake --version | head -1), $(nvcc --version | tail -1)"
