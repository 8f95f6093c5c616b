#!/usr/bin/env bash
# CI: Debian's chromium for the web page's browser test, installed when
# absent. CI runs as root on Debian; elsewhere use sudo.
set -euo pipefail
if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
chromium --version
