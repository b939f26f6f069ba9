# Sourced by the scripts: puts the CUDA toolkit on PATH when it is installed but not there.
if ! command -v nvcc >/dev/null 2>&1; then
  for dir in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    if [ -x "$dir/nvcc" ]; then export PATH="$dir:$PATH"; break; fi
  done
fi
export CUDACXX="${CUDACXX:-$(command -v nvcc || true)}"
