# trt-action: `make` builds bin/trt-action (and every backend whose headers it
# is given), `make test` runs every test, `make demo` runs the demo matrix on
# the simulator. For contributors: `make check` (the fast loop), `make lint`,
# `make fuzz` (CONTRIBUTING.md).

GO        ?= go
# The version a build names: a release tag (v1.2.3), git describe's form after
# one (v1.2.3-4-gHASH), else 0.0.0+gHASH: always one make dist can turn into a
# PEP 440 version for the wheels (internal/wheel/version.go).
VERSION   ?= $(shell git describe --tags --dirty 2>/dev/null || \
               git describe --always --dirty 2>/dev/null | sed 's/^/0.0.0+g/; s/-dirty$$/.dirty/' | grep . || \
               echo 0.0.0+dev)
BIN       := bin/trt-action
LIBDIR    := bin/lib
GOFLAGS_BUILD := -trimpath -ldflags "-s -w -X github.com/trt-action/trt-action/internal/cli.Version=$(VERSION)"

export CGO_ENABLED := 1

# Backends compiled from native/backends/ when their headers are given:
# TRT_RTX_INCLUDE (scripts/setup-tensorrt-rtx prints it), TRT10_INCLUDE, TRT11_INCLUDE.
-include native/backends/backends.mk

.PHONY: all build build-binary dist test check demo bench fuzz lint clean FORCE

all: build

build: $(BIN) $(BACKEND_LIBS)

# The binary alone (scripts/dist sets BIN, GOARCH and CC per platform).
build-binary: $(BIN)

$(BIN): FORCE
	@mkdir -p $(dir $@)
	$(GO) build $(GOFLAGS_BUILD) -o $@ ./cmd/trt-action

# Every test: set-up of TensorRT-RTX and the test models, lint, the race
# detector, brief fuzzing. The README's test command.
test:
	scripts/test

# The fast loop, in a couple of minutes and with no set-up: vet and the unit
# tests. Tests that build real engines skip under -short (not in CI, where
# -short changes nothing); make test runs them.
check:
	$(GO) vet ./...
	$(GO) test -short -count=1 ./...

# go vet, staticcheck, shellcheck and actionlint (make test runs it too).
lint:
	scripts/lint

# The fuzz targets make test runs briefly, each for FUZZTIME (default 20
# times its brief budget; FUZZTIME=10m or FUZZTIME=5000000x).
fuzz:
	scripts/fuzz long

# The demo matrix on the simulator: no GPU, no TensorRT. One build blows its
# phase budget on purpose, so trt-action exits 3; the demo still succeeds.
demo: $(BIN)
	@$(BIN) build -f examples/trt-builds.yml --jobs 3 --report bin/demo-report.json --summary bin/demo-summary.md; \
	code=$$?; \
	if [ $$code -eq 3 ]; then echo "exit code 3: a build went over its budget (on purpose in this demo); report bin/demo-report.json, summary bin/demo-summary.md"; \
	else exit $$code; fi

bench:
	scripts/bench

# Release artifacts for linux amd64 and arm64 in dist/: tarballs, SBOMs and
# wheels, with checksums.txt. VERSION must have a PEP 440 form (v1.2.3,
# v1.2.3-rc.1, git describe output after such a tag; it is checked first).
# It sets up TensorRT-RTX and the wheel tools as make test does, and names
# what it cannot set up (NVIDIA's TensorRT headers: TRT_HEADERS=DIR; the
# arm64 cross compiler).
dist:
	TRT_HEADERS="$(TRT_HEADERS)" scripts/dist $(VERSION)

clean:
	rm -rf bin dist
