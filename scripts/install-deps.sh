#!/usr/bin/env bash
# Installs what libknn needs to build and test, from Debian's packages, when it is missing.
# Optional tools (gnuplot for k-sweep --plot, matplotlib for the Python plot example) are installed
# too; the build works without them.
set -euo pipefail

required=(cmake ninja-build g++ libeigen3-dev libcxxopts-dev libfccp-dev libgtest-dev googletest nlohmann-json3-dev zlib1g-dev)
# The sanitizer preset: clang with its sanitizer and libFuzzer runtimes, and LLVM's OpenMP.
required+=(clang libclang-rt-14-dev libomp-dev)
# Sharded training sets over MPI ranks (the tests run mpirun -np 2..4).
required+=(libopenmpi-dev openmpi-bin)
# The Python package libknn (python/) for Debian's /usr/bin/python3, and what its tests run.
required+=(python3-dev python3-numpy pybind11-dev python3-sklearn python3-pandas python3-pytest)
optional=(gnuplot-nox python3-matplotlib)

missing=()
for p in "${required[@]}" "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "CUDA Toolkit found: the GPU backend and primitives will be built" >&2
else
  echo "no CUDA Toolkit: building the CPU backend only" >&2
fi
