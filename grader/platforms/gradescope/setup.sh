#!/usr/bin/env bash
# Gradescope autograder setup (runs once when the image is built). Zip this workbook so
# that this file and run_autograder sit at the top of the zip next to a `source/` copy of
# the repository, or simply zip the repository with these two files copied to its root:
# Gradescope unpacks the zip to /autograder/source.
set -euo pipefail
apt-get update
apt-get install -y --no-install-recommends ca-certificates curl gnupg
# Node 20 (the workbook's engine) from NodeSource.
curl -fsSL https://deb.nodesource.com/setup_20.x | bash -
apt-get install -y --no-install-recommends nodejs
cd /autograder/source
npm ci --no-audit --no-fund
# Warm the TypeScript and vitest paths once so the first grade is not the slow one.
npm run grade -- --solution --json /tmp/warmup.json --format json > /dev/null || true
