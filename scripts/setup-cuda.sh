#!/usr/bin/env bash
# Makes NVRTC, ptxas, the libcu++/CUB headers and a working nvcc (cicc from nvvm, the crt
# headers, the CUDA runtime headers and libcudart to link against; the host's gcc/g++ does
# the host side) available to fencehound.
#
# If a CUDA toolkit is already installed (CUDA_HOME / CUDA_PATH, or nvcc on PATH with
# libnvrtc beside it) it is used and nothing is installed. Otherwise the pinned NVIDIA
# wheels are installed into <repo>/.tools/cuda, where fencehound-toolchain looks for them.
# Idempotent: a stamp file records the installed versions, so a second run is instant.
# Prints one line on success.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"

# Pinned versions. nvidia-cuda-cccl has no 13.5.37 release; 13.3.5.0.6 is the matching one.
# nvcc needs the other three: nvidia-nvvm (cicc), nvidia-cuda-crt (crt/host_runtime.h and
# friends), nvidia-cuda-runtime (cuda_runtime.h and the real libcudart.so.13, which programs
# link against; `fencehound exec` puts fencehound's own libcudart.so.13 in its place).
# nvidia-cuda-profiler-api carries cuda_profiler_api.h (cudaProfilerStart/Stop), which
# programs include and no other wheel has; it has no 13.5.37 release, 13.5.25 is the match.
wheels=(
  "nvidia-cuda-nvrtc==13.5.37"
  "nvidia-cuda-nvcc==13.5.37"
  "nvidia-cuda-cccl==13.3.5.0.6"
  "nvidia-nvvm==13.5.37"
  "nvidia-cuda-runtime==13.5.37"
  "nvidia-cuda-crt==13.5.37"
  "nvidia-cuda-profiler-api==13.5.25"
)
target="$root/.tools/cuda"
stamp="$target/.fencehound-stamp"
want="${wheels[*]}"

has_nvrtc() { # $1: a toolkit root
  local d
  for d in "$1/lib64" "$1/lib" "$1/targets/x86_64-linux/lib"; do
    compgen -G "$d/libnvrtc.so*" >/dev/null && return 0
  done
  return 1
}

for var in CUDA_HOME CUDA_PATH; do
  dir="${!var:-}"
  if [[ -n "$dir" ]] && has_nvrtc "$dir"; then
    echo "setup-cuda: using the CUDA toolkit at $dir (from $var)"
    exit 0
  fi
done
if nvcc_path="$(command -v nvcc 2>/dev/null)"; then
  toolkit="$(cd "$(dirname "$nvcc_path")/.." && pwd)"
  if has_nvrtc "$toolkit"; then
    echo "setup-cuda: using the CUDA toolkit at $toolkit (nvcc on PATH)"
    exit 0
  fi
fi

# Two scripts (test.sh, demo.sh) may run this at once; only one may install.
mkdir -p "$root/.tools"
if command -v flock >/dev/null; then
  exec 9>"$root/.tools/.setup-cuda.lock"
  flock 9
fi

cu13="$target/nvidia/cu13"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" \
      && -e "$cu13/lib/libnvrtc.so.13" && -x "$cu13/bin/ptxas" && -x "$cu13/bin/nvcc" \
      && -x "$cu13/nvvm/bin/cicc" && -e "$cu13/include/crt/host_runtime.h" \
      && -e "$cu13/lib/libcudart.so" && -e "$cu13/include/cuda_profiler_api.h" ]]; then
  echo "setup-cuda: CUDA wheels already in .tools/cuda ($want)"
  exit 0
fi

if ! command -v python3 >/dev/null; then
  echo "setup-cuda: python3 is needed to install the NVIDIA wheels (or set CUDA_HOME to a CUDA 13 toolkit)" >&2
  exit 1
fi

# Install into a fresh directory and swap it in, so an interrupted run never leaves a
# half-populated .tools/cuda that looks complete. Leftovers of killed runs go first.
rm -rf "$root"/.tools/cuda.tmp.*
tmp="$(mktemp -d "$root/.tools/cuda.tmp.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
log="$tmp.log"
if ! python3 -m pip install --quiet --disable-pip-version-check --no-deps --no-input \
      --target "$tmp" "${wheels[@]}" >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "setup-cuda: pip install of ${wheels[*]} failed (see above)" >&2
  exit 1
fi
rm -f "$log"
# `nvcc -cudart shared` links with -lcudart; the wheel ships only the versioned file.
ln -sf libcudart.so.13 "$tmp/nvidia/cu13/lib/libcudart.so"
echo "$want" >"$tmp/.fencehound-stamp"
rm -rf "$target"
mv -T "$tmp" "$target"
trap - EXIT
echo "setup-cuda: installed $want into .tools/cuda"
