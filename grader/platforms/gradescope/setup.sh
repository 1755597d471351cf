#!/usr/bin/env bash
# Gradescope autograder setup (runs once, as root, when Gradescope builds the image from the
# zip that `npm run dist -- gradescope OUT_ZIP` makes; the zip is unpacked to
# /autograder/source). Installs Node 22 LTS, the locked packages, an unprivileged user for
# the student's code, and then grades the starter once as that user as a build check: the
# image build fails (Gradescope shows this script's output to the instructor) unless that
# grade is the starter's known verdict. It warms nothing: every grade gets fresh private temp
# dirs (run-grade.sh), and Gradescope starts each run from the built image anyway.
#
# Node: the official Linux tarball of the newest 22.x from nodejs.org, checked against its
# SHASUMS256.txt (no third-party apt repository). Knobs, for tests and other images:
#   LAB_SOURCE=DIR           where the zip was unpacked (default /autograder/source)
#   LAB_NODE_INSTALL=skip    use the node already on PATH (must be 22 or newer to skip otherwise)
#   LAB_NODE_LINE=v22.x      another release line, e.g. v24.x
#   LAB_NPM_CI=skip          keep an existing node_modules
#   LAB_GRADE_USER=NAME      the unprivileged user (default lab33; empty = none)
#   LAB_BUILD_CHECK=skip     skip the build check (an image that is checked some other way)
set -euo pipefail
source_dir=${LAB_SOURCE:-/autograder/source}
line=${LAB_NODE_LINE:-v22.x}
user=${LAB_GRADE_USER-lab33}

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ "${LAB_NODE_INSTALL:-}" != skip ] && [ "$(node_major)" -lt 22 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends ca-certificates curl xz-utils
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) echo "unsupported machine $(uname -m)" >&2; exit 1 ;;
  esac
  base="https://nodejs.org/dist/latest-${line}"
  tmp=$(mktemp -d)
  curl -fsSL "$base/SHASUMS256.txt" -o "$tmp/SHASUMS256.txt"
  tarball=$(grep -o "node-v[0-9.]*-linux-${arch}\.tar\.xz" "$tmp/SHASUMS256.txt" | head -n 1)
  curl -fsSL "$base/$tarball" -o "$tmp/$tarball"
  (cd "$tmp" && grep " ${tarball}\$" SHASUMS256.txt | sha256sum -c -)
  tar -xJf "$tmp/$tarball" -C /usr/local --strip-components=1 --no-same-owner
  rm -rf "$tmp"
fi
if [ "$(node_major)" -lt 22 ]; then
  echo "Node 22 or newer is required, found $(node --version 2>/dev/null || echo none)" >&2
  exit 1
fi
echo "node $(node --version), npm $(npm --version)"

cd "$source_dir"
if [ "${LAB_NPM_CI:-}" != skip ]; then npm ci --no-audit --no-fund; fi
chmod -R a+rX "$source_dir"
chmod +x "$source_dir/run_autograder" "$source_dir/grader/platforms/run-grade.sh" 2> /dev/null || true

if [ -n "$user" ] && [ "$(id -u)" = 0 ] && ! id -u "$user" > /dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
fi

# Build check (build-check.sh beside this file): the image must grade the starter to its
# pinned verdict, or the build fails here with the reason.
if [ "${LAB_BUILD_CHECK:-}" != skip ]; then
  LAB_SOURCE=$source_dir LAB_GRADE_USER=$user bash "$source_dir/grader/platforms/gradescope/build-check.sh"
fi
