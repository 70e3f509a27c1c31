# connectd — build, run, test.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS := -s -w -X main.Version=$(VERSION) -X main.DateBuilt=$(DATE)
BIN     := bin/connectd
GO_TEST_FLAGS ?= -race -timeout 25m
DEV_BROKER ?= 127.0.0.1:19192

.PHONY: all build run test unit interop lint fmt kafka-up kafka-down bench clean docs studio-web studio-screenshot

all: build

build:
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/connectd

## run: the quickstart demo on an embedded development broker.
run: build
	$(BIN) run --dev-broker $(DEV_BROKER) --dev-broker-topics quickstart config/quickstart.yaml

# Confluent's Python client (a serializer we did not write) for the
# avro-confluent interop test, and Apache Avro's Python library (its schema
# compatibility checker referees schema/compat), in a venv of the checkout.
INTEROP_VENV := .venv-interop
INTEROP_PACKAGES := "confluent-kafka[avro,schemaregistry]" fastavro requests avro protobuf
$(INTEROP_VENV)/.installed: Makefile
	python3 -m venv $(INTEROP_VENV)
	$(INTEROP_VENV)/bin/pip install -q $(INTEROP_PACKAGES)
	touch $@

## test: the whole suite, real Apache Kafka broker and schema registry included.
test: build lint $(INTEROP_VENV)/.installed
	scripts/kafka.sh up
	scripts/registry.sh up >/dev/null
	eval "$$(scripts/kafka.sh env)"; eval "$$(scripts/registry.sh env)"; \
	  export CONNECTD_REQUIRE_KAFKA=1 CONNECTD_REQUIRE_REGISTRY=1 CONNECTD_BIN=$(CURDIR)/$(BIN); \
	  export CONNECTD_PYTHON=$(CURDIR)/$(INTEROP_VENV)/bin/python CONNECTD_REQUIRE_INTEROP=1; \
	  export CONNECTD_REQUIRE_BROWSER=1 CONNECTD_REQUIRE_NODE=1; \
	  go test $(GO_TEST_FLAGS) $$(go list ./... | grep -v -e /test/e2e -e /test/interop) && \
	  go test -v -timeout 25m ./test/e2e/ # -v: the SIGKILL runs report their duplicate counts

## interop: Apache Flink as the referee (test/interop, docs/interop.md): Flink SQL from Maven
## Central in a local MiniCluster writes and reads the same CREATE TABLE as connectd on the real
## broker, format by format, and the rows must be identical. Needs Java 17+ and Maven; the Flink
## runner is built once into ~/.cache/connectd (scripts/flink-sql.sh build).
interop: build
	scripts/kafka.sh up
	scripts/registry.sh up >/dev/null
	scripts/flink-sql.sh build >/dev/null
	eval "$$(scripts/kafka.sh env)"; eval "$$(scripts/registry.sh env)"; \
	  export CONNECTD_REQUIRE_KAFKA=1 CONNECTD_REQUIRE_REGISTRY=1 CONNECTD_REQUIRE_INTEROP=1 CONNECTD_BIN=$(CURDIR)/$(BIN); \
	  go test -v -count=1 -timeout 30m ./test/interop/ # -v: the known mismatches are logged

## studio-web: rebuild the studio's front end (internal/studio/web/dist, committed and embedded)
## from package-lock.json; test/studio's TestBundleIsCurrent checks that the committed bundle is
## what this gives (docs/studio.md). Needs Node and npm; `go build` does not.
studio-web:
	cd internal/studio/web && npm ci --no-audit --no-fund && npm run build

## studio-screenshot: docs/studio.png, taken by the browser test (headless Chromium).
studio-screenshot: build
	CONNECTD_BIN=$(CURDIR)/$(BIN) CONNECTD_REQUIRE_BROWSER=1 CONNECTD_STUDIO_SCREENSHOT=docs/studio.png \
	  go test -count=1 -run 'TestStudioInBrowser' -v ./test/studio/

## unit: tests that need no real broker (integration tests skip).
unit:
	go test $(GO_TEST_FLAGS) ./...

## docs: the component reference pages (docs/components/*.md), generated from the specs, and
## docs/flink-options.md, generated from the option tables of schema/;
## tests of plugins/bundle and internal/docsgen fail when the checked-in pages differ.
docs:
	go run ./cmd/connectd-docs -out docs/components

lint: build
	go vet ./...
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(BIN) lint config/*.yaml
	$(BIN) test ./config/...

## bench: connectd vs the raw franz-go client on the real broker (a report, not a test).
## BENCH_FLINK=1 adds the scenario flink (Apache Flink's Kafka connector as a contender;
## needs Java 17+ and Maven with Maven Central, see docs/benchmarks.md).
comma := ,
BENCH_SCENARIOS ?= source,sink,windows,repartition,formats,partitions10k$(if $(filter 1,$(BENCH_FLINK)),$(comma)flink)
BENCH_FLAGS ?= -scenarios $(BENCH_SCENARIOS) -records 5000000 -size 200 -partitions 8 -rounds 3
bench: build
	scripts/kafka.sh up
	eval "$$(scripts/kafka.sh env)"; go run ./bench -bin $(BIN) $(BENCH_FLAGS) | tee bench/last-report.md
	@echo "report in bench/last-report.md; curated results live in docs/benchmarks.md"

kafka-up:
	scripts/kafka.sh up

kafka-down:
	scripts/kafka.sh down

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin

# A Confluent-compatible schema registry on 127.0.0.1:18081 (franz-go's srfake, in memory);
# `make test` starts it too (test/e2e's TestRegistryInterop uses it).
.PHONY: registry-up registry-down
registry-up:
	scripts/registry.sh up

registry-down:
	scripts/registry.sh down
