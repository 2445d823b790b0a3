#!/usr/bin/env bash
# Installs the Debian packages the stack and its tests need (bubblewrap for the
# sandbox's OS boundary around Python, CPython with numpy, pandas, matplotlib
# and openpyxl for the sandbox's data engine, Chromium for the console's browser tests,
# Java for DynamoDB Local, a C++ toolchain with CMake and Ninja to build the
# llama.cpp server the tests run a tiny model on, Prometheus for the metrics
# test), when they are missing. Safe to run again.
set -euo pipefail
need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v java >/dev/null 2>&1 || need+=(default-jre-headless)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v git >/dev/null 2>&1 || need+=(git)
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v ninja >/dev/null 2>&1 || need+=(ninja-build)
command -v c++ >/dev/null 2>&1 || need+=(g++)
# The sandbox's data engine, pinned to Debian 12's versions (upstream version,
# any Debian revision, so that security updates still install). The sandbox
# pins the same versions (packages/sandbox/src/python/data-libraries.ts; a test
# checks the two agree) and `stackvm doctor` reports what it finds.
data=(python3.11=3.11.2* python3-numpy=1:1.24.2* python3-pandas=1.5.3* python3-matplotlib=3.6.3* python3-openpyxl=3.0.9*)
for pin in "${data[@]}"; do
  name="${pin%%=*}"
  want="${pin#*=}"
  have="$(dpkg-query -W -f='${Version}' "$name" 2>/dev/null || true)"
  # shellcheck disable=SC2053 # the pin is a glob on purpose
  [[ "$have" == $want ]] || need+=("$pin")
done
# Prometheus: the metrics test scrapes the local stack's /metrics with it.
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
