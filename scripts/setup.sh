#!/usr/bin/env bash
# Installs the Debian packages mallocbench needs, only those missing (idempotent: a second
# run checks and installs nothing). Usage: scripts/setup.sh [--with-fuzz] [--with-latex]
set -euo pipefail

packages=(cmake make gcc pkg-config libhdf5-dev hdf5-tools libpcre2-dev libcmocka-dev
          libopenblas-dev libglpk-dev gnuplot-nox)
for arg in "$@"; do
  case "$arg" in
    --with-fuzz) packages+=(clang libclang-rt-14-dev) ;;
    --with-latex) packages+=(latexmk texlive-latex-base texlive-latex-recommended
                             texlive-fonts-recommended lmodern) ;;
    *) echo "setup.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
