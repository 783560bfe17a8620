#!/usr/bin/env bash
# ./setup.sh        installs the Debian packages nncosim and its tests need (only those missing),
#                   then configures and builds everything incrementally;
# ./setup.sh demo   the same for the demo alone: its packages and the nncosim CLI (the RTL
#                   library, the driver, the golden), no test, benchmark or fuzz target.
# Re-running either when nothing changed takes seconds.
set -euo pipefail
cd "$(dirname "$0")"

# What building the CLI needs.
packages=(cmake ninja-build ccache g++ pkg-config git verilator libsystemc-dev libeigen3-dev
          doctest-dev libspdlog-dev libcli11-dev nlohmann-json3-dev libgemmlowp-dev python3
          libssl-dev libflatbuffers-dev flatbuffers-compiler)
targets=()
if [[ ${1:-} == demo ]]; then
  targets=(--target nncosim)
else
  packages+=(clang-format gtkwave xvfb xauth tcl  # style test, waveform screenshots
             clang libclang-rt-14-dev llvm  # clang, libFuzzer, llvm-symbolizer: fuzz/run
             munge slurmctld slurmd slurm-client)  # testbench/slurm/local-cluster
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build=${NNCOSIM_BUILD_DIR:-build}
# Configuring every time (a fraction of a second when nothing changed) picks up source files
# added or removed since the last build.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
