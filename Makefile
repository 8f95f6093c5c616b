# Release builds. `make release` cross-compiles static binaries of every
# command for each platform into dist/, one .tar.gz per platform plus
# SHA256SUMS; `make image` builds the container image from deploy/Dockerfile.
# Nothing is published. .ci/release-check.sh runs the same cross build in CI.

VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
IMAGE     ?= knowhub:$(VERSION)
DIST      ?= dist

.PHONY: release image clean

release:
	@rm -rf $(DIST) && mkdir -p $(DIST)
	@set -e; for p in $(PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; dir=$(DIST)/knowhub_$(VERSION)_$${os}_$${arch}; \
		echo "build $$os/$$arch"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags="-s -w" -o $$dir/ ./cmd/...; \
		cp LICENSE README.md $$dir/; \
		tar -C $(DIST) -czf $$dir.tar.gz $$(basename $$dir); rm -rf $$dir; \
	done
	@cd $(DIST) && sha256sum *.tar.gz > SHA256SUMS && cat SHA256SUMS

image:
	docker build -f deploy/Dockerfile -t $(IMAGE) .

clean:
	rm -rf $(DIST)
