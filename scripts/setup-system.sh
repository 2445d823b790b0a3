#!/usr/bin/env bash
# Installs the Debian packages the stack and its tests need (bubblewrap for the
# sandbox's OS boundary around Python, Chromium for the console's browser tests,
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
# Prometheus: the metrics test scrapes the local stack's /metrics with it.
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
