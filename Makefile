# purser — the two commands a newcomer needs are `make run` and `make test`.
GO ?= go
export GOTOOLCHAIN := local
## encoding/json built on json/v2 (the baseline for Go 1.27), the same v1 behaviour, 1.5-2 times
## as fast on a conversation's state (-bench StateCodec ./services/orchestrator).
## A plain `go build` still works, with the older implementation.
export GOEXPERIMENT ?= jsonv2
## Builds name files by module path, not by folder: a second checkout (a worktree, CI's clean clone)
## then finds the packages it shares with the first in the build cache instead of compiling them again.
export GOFLAGS ?= -trimpath

.PHONY: run test test-env test-deploy test-traces build vet bench fuzz tidy-check chaos chaos-nats chaos-cluster mutate

## run: all four services in one process on an embedded NATS and SQLite (./data)
run:
	$(GO) run ./cmd/purser up

## test: vet plus every test with the race detector (store suite on SQLite and Postgres),
## then the contracts' decoding again on the older encoding/json (what a plain `go build` gets),
## then the deployment's tests (manifests, alert rules)
## It first sets up what the tests need (scripts/test-env.sh: starts the local PostgreSQL,
## installs chromium, chromium-driver and promtool) or stops naming what is missing.
## Four test binaries at a time (go's default is one a core): most packages spend their time waiting
## on NATS, PostgreSQL, fsync and a browser, so on 2 cores two at a time kept them about 1.7 of 2 busy (CPU time over wall time)
## (a warm-cache `go test -race ./...` on one such machine: 8 min 26 s with -p 4, every test passing, against 10 min 50 s
## with 2; a slower one later took 16 min for all of `make test` with -p 4).
TEST_PACKAGES_AT_ONCE ?= 4
export PURSER_TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
test: test-env vet
	$(GO) test -race -count=1 -p $(TEST_PACKAGES_AT_ONCE) -timeout 25m ./...
	GOEXPERIMENT= $(GO) test -count=1 ./pkg/contracts
	$(MAKE) test-deploy

test-env:
	@scripts/test-env.sh

## test-traces: a turn's spans reach a real OTLP receiver, the OpenTelemetry collector's otlpreceiver,
## which the test builds from internal/tracing/otlpsink (a module of its own, from the Go module proxy):
## minutes on a cold build cache, seconds once cached, so it is not part of `make test`
test-traces:
	$(GO) test -race -count=1 -tags traces -run TestTraces -v ./internal/app

## test-deploy: every kustomize overlay renders and decodes strictly (deploy/ is a module of its own);
## the alert rules pass promtool's check and their unit tests
test-deploy:
	cd deploy && $(GO) vet ./... && $(GO) test -count=1 ./...
	@command -v promtool >/dev/null || { echo "promtool is missing: install Debian's prometheus package (apt-get install prometheus), which provides it" >&2; exit 1; }
	promtool check rules deploy/monitoring/rules.yml
	cd deploy/monitoring && promtool test rules rules_test.yml

## vet: go vet, gofmt and tidy go.mod files (checked, never rewritten)
vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) mod tidy -diff
	cd deploy && $(GO) mod tidy -diff

build:
	$(GO) build -o bin/purser ./cmd/purser

## bench: the benchmarks whose figures go into closing notes
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## fuzz: each fuzz target for FUZZTIME (default 1m); statements minimize in 50 runs (their seeds are whole statements)
FUZZTIME ?= 1m
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME) ./pkg/contracts
	$(GO) test -run '^$$' -fuzz FuzzParseCSV -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./services/toolrunner/statements
	$(GO) test -run '^$$' -fuzz FuzzParseOFX -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./services/toolrunner/statements
	$(GO) test -run '^$$' -fuzz FuzzParseCamt -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./services/toolrunner/statements
	$(GO) test -run '^$$' -fuzz FuzzParseMT940 -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./services/toolrunner/statements
	$(GO) test -run '^$$' -fuzz FuzzParseQIF -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./services/toolrunner/statements
	$(GO) test -run '^$$' -fuzz FuzzParsePDF -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./services/toolrunner/statements
	$(GO) test -run '^$$' -fuzz FuzzSandbox -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./services/toolrunner/statements
	$(GO) test -run '^$$' -fuzz FuzzScanImage -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./services/toolrunner/statements
	$(GO) test -run '^$$' -fuzz FuzzOCRTable -fuzztime $(FUZZTIME) -fuzzminimizetime 50x ./services/toolrunner/statements

tidy-check:
	$(GO) mod tidy
	cd deploy && $(GO) mod tidy
	git diff --exit-code go.mod go.sum deploy/go.mod deploy/go.sum

## chaos: the four services apart on a loopback NATS and a fresh PostgreSQL database,
## SIGKILLed at random while CHAOS_USERS users make CHAOS_TURNS changes (default 1000);
## the last line counts lost, doubled and stuck turns (all must be 0). Bounded by CHAOS_LIMIT (15m).
chaos: build
	$(GO) run ./cmd/chaos -bin bin/purser -mode services

## chaos-nats: the same while the NATS server restarts in a loop
chaos-nats: build
	$(GO) run ./cmd/chaos -bin bin/purser -mode nats

## chaos-cluster: a 3-node NATS cluster (streams at 3 replicas), a PostgreSQL of its own and two
## replicas of every service, each a process; NATS nodes and replicas SIGKILLed at random and
## PostgreSQL killed once while CHAOS_USERS users make CHAOS_TURNS changes (default 400), then
## every replica rolled (SIGTERM, exit, start); the last line counts lost, doubled, stuck and
## failed turns (all must be 0). Needs PostgreSQL's binaries (/usr/lib/postgresql/*/bin).
chaos-cluster: build
	$(GO) run ./cmd/chaos -bin bin/purser -mode cluster

## mutate: the mutation pass of docs/mutation.md: each rule broken in the smallest way, one
## mutant at a time, the tests named for it run, the file restored; fails when a mutant
## survives (MUTATE_RUN=. runs each package's whole suite instead). Needs PostgreSQL as make test does.
mutate:
	scripts/mutate.sh
