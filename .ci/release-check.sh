#!/usr/bin/env bash
# CI: the release build without publishing. Cross-compiles every command
# statically (CGO_ENABLED=0) for linux and darwin on amd64 and arm64, as
# `make release` does, checks each binary's platform and that it links no C
# library, and that the native knowhub reports its version. It needs no
# Docker engine; deploy/Dockerfile runs the same go build.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=${GOFLAGS:--mod=readonly}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Each target is a cold compile of its own (about 2.5 min on two cores), so
# CI checks one arm64 and one darwin target by default; PLATFORMS="linux/amd64
# linux/arm64 darwin/amd64 darwin/arm64" checks every platform make release builds.
for p in ${PLATFORMS:-linux/arm64 darwin/amd64}; do
  os=${p%/*} arch=${p#*/}
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags="-s -w" -o "$out/$os-$arch/" ./cmd/...
  for b in knowhub watcher chunker indexer query extractor; do
    f="$out/$os-$arch/$b"
    [ -x "$f" ] || { echo "missing $os/$arch $b"; exit 1; }
    # the build info records the target and that cgo was off
    info=$(go version -m "$f")
    grep -q "GOOS=$os" <<<"$info" && grep -q "GOARCH=$arch" <<<"$info" && grep -q "CGO_ENABLED=0" <<<"$info" \
      || { echo "$os/$arch $b: unexpected build info"; echo "$info"; exit 1; }
  done
  echo "ok $os/$arch"
done
native="$out/$(go env GOOS)-$(go env GOARCH)/knowhub"
[ -x "$native" ] || { mkdir -p "$(dirname "$native")" && go build -o "$native" ./cmd/knowhub; }
"$native" --version | grep -q '^knowhub ' || { echo "knowhub --version failed"; exit 1; }
"$native" --version
