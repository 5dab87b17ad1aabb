# redfish-bridge: a Redfish BMC for KubeVirt VirtualMachines, writing with Server-Side Apply.
#
# `make demo` runs the product on its embedded default; `make test` runs every test.

SHELL := /bin/bash
BIN ?= $(CURDIR)/bin
GO ?= go
GO_MODULE := github.com/redfish-bridge/redfish-bridge
export REDFISH_BRIDGE_BIN := $(BIN)

.DEFAULT_GOAL := help

-include hack/tools.mk

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_.-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/redfish-bridge.
	$(GO) build -trimpath -o $(BIN)/redfish-bridge ./cmd/redfish-bridge

.PHONY: demo
demo: tools build ## Run a local apiserver with KubeVirt's virt-controller, a simulated node and the Redfish service on https://127.0.0.1:8443.
	$(GO) build -trimpath -o $(BIN)/redfish-bridge-demo ./cmd/redfish-bridge-demo
	$(BIN)/redfish-bridge-demo $(DEMO_ARGS)

# `make test` runs every package with the race detector. power/'s TestRace
# (concurrent SSA writers on many VMs, against KubeVirt's virt-controller)
# runs scaled down under -race (6 VMs x 4 cycles, power/race_on_test.go:
# the full 12 x 14 is too slow with -race), so its full size runs once
# more without -race, beside the rest. TestRaceReplicas (the same cycles,
# each request to a random one of three replicas) runs once, under -race,
# at 6 VMs x 3 cycles (power/replicas_test.go).
# RACE= turns the detector off everywhere (and TestRace runs once, full).
RACE ?= -race
FULL_SIZE := $(GO_MODULE)/power
FULL_SIZE_RUN := ^TestRace$$

# e2e/ironic and e2e's sushy 5.13 run Debian unstable's Ironic 39 from a
# chroot built once per machine into ~/.cache/redfish-bridge
# (hack/ironic-chroot.sh: debootstrap and apt-get, as root). Where it cannot
# be built (not root, no debootstrap) `make test` goes on without it and
# those tests skip; under CI=true the build must succeed.
.PHONY: ironic-chroot
ironic-chroot: ## Build the Ironic 39 chroot of e2e/ironic when missing (root, debootstrap; ~1.2 GiB, minutes once per machine).
	@if hack/ironic-chroot.sh check; then :; \
	elif [ "$$CI" = true ] || { [ "$$(id -u)" = 0 ] && command -v debootstrap >/dev/null; }; then \
	  hack/ironic-chroot.sh build; \
	else echo "ironic-chroot: not built (needs root and debootstrap): Ironic 39 tests skip"; fi

# e2e/metal3 runs metal3's baremetal-operator, built from
# ../shared/third_party once per machine into ~/.cache/redfish-bridge
# (hack/bmo.sh: minutes with a cold Go build cache, about one warm). Without the source tree `make test` goes on and e2e/metal3
# skips; under CI=true the build must succeed.
.PHONY: bmo
bmo: ## Build metal3's baremetal-operator 0.13.2 and 0.14 for e2e/metal3 when missing (once per machine).
	@for v in 0.13.2 0.14.0-rc.0; do \
	  if hack/bmo.sh check $$v 2>/dev/null; then :; \
	  elif [ "$$CI" = true ] || [ -d ../shared/third_party/baremetal-operator-$$v ]; then \
	    hack/bmo.sh build $$v || exit 1; \
	  else echo "bmo: $$v not built (no ../shared/third_party/baremetal-operator-$$v): e2e/metal3 skips it"; fi; \
	done

.PHONY: test
test: tools ironic-chroot bmo ## Run unit and end-to-end tests with -race (builds the test tools into ./bin, the Ironic 39 chroot and baremetal-operator when missing).
	@logs=$$(mktemp -d); plain=; \
	if [ -n '$(RACE)' ]; then ( set -o pipefail; $(GO) test -count=1 -timeout 40m -run '$(FULL_SIZE_RUN)' $(FULL_SIZE) 2>&1 | tee $$logs/plain.log ) & plain=$$!; fi; \
	set -o pipefail; $(GO) test $(RACE) -count=1 -timeout 40m ./... 2>&1 | tee $$logs/all.log; raced=$$?; \
	plainrc=0; if [ -n "$$plain" ]; then wait $$plain; plainrc=$$?; fi; \
	if (( raced || plainrc )); then hack/test-summary.sh $$logs/*.log; fi; rm -rf $$logs; \
	exit $$(( raced || plainrc ))

.PHONY: e2e
e2e: tools ironic-chroot bmo ## Run only the end-to-end tests (real apiserver, simulator, real Redfish clients).
	$(GO) test -count=1 -timeout 40m ./e2e/...

.PHONY: bench
bench: tools ## Run the benchmarks and print the table (BENCH_10K=1: then the 10,000-VM scenario too, +25-55 min).
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m ./harness/bench/...
	@if [ "$(BENCH_10K)" = 1 ]; then $(MAKE) --no-print-directory bench-10k; fi

.PHONY: bench-10k
bench-10k: tools ## Run the 10,000-VM scenario: the bridge binary as its own process (RSS, start-up, GETs, events to 100 subscriptions against polling, 1000 Ironic cycles).
	BENCH_RSS_GOMEMLIMIT=230MiB BENCH_RSS_VMS=10000 BENCH_RSS_RUNNING=1000 BENCH_RSS_RATES=5s BENCH_RSS_CYCLES=1000 BENCH_RSS_PHASE_TIMEOUT=20m BENCH_RSS_TIMEOUT=55m \
	  BENCH_RSS_BARE_LIST=1 BENCH_RSS_PAGES=5s BENCH_RSS_POWER_POLL=10000 BENCH_RSS_SUBSCRIPTIONS=100 BENCH_RSS_EVENT_STARTS=100 \
	  $(GO) test -run '^$$' -bench BridgeRSS -benchtime 1x -timeout 60m ./harness/bench/

.PHONY: bench-100k
bench-100k: tools ## Run the 100,000-VM scenario (1000 namespaces; the bench writes the VMs' status, no virt-controller; ~30 min; BENCH_RSS_VMS/BENCH_RSS_NAMESPACES shrink it).
	BENCH_RSS_GOMEMLIMIT=$${BENCH_RSS_GOMEMLIMIT:-460MiB} BENCH_RSS_VMS=$${BENCH_RSS_VMS:-100000} BENCH_RSS_NAMESPACES=$${BENCH_RSS_NAMESPACES:-1000} \
	  BENCH_RSS_STATUS_BY_BENCH=1 BENCH_RSS_BARE_LIST=1 BENCH_RSS_RATES=5s BENCH_RSS_PAGES=5s \
	  BENCH_RSS_STEP_TIMEOUT=$${BENCH_RSS_STEP_TIMEOUT:-60m} BENCH_RSS_PHASE_TIMEOUT=20m BENCH_RSS_TIMEOUT=$${BENCH_RSS_TIMEOUT:-150m} \
	  $(GO) test -run '^$$' -bench BridgeRSS -benchtime 1x -timeout 160m ./harness/bench/

.PHONY: fuzz
fuzz: ## Run the fuzz targets for longer.
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 60s $$pkg || exit 1; \
	  done; \
	done

.PHONY: lint
lint: golangci-lint ## Run golangci-lint with .golangci.yml (vet, staticcheck, errcheck, errorlint, gosec, bodyclose, noctx, containedctx, importas, nolintlint, revive's exported comments, stray loggers, context.Background, wait.Poll in tests, gofmt), and fail when go.mod or go.sum is not tidy.
	$(GOLANGCI_LINT) run ./...
	$(GO) mod tidy -diff

.PHONY: generate
generate: generate-crds generate-webhooks generate-cdi ## Regenerate the KubeVirt CRD variants under crds/, virt-api's webhook configurations under harness/testcluster/webhooks, and what CDI's operator installs (crds/cdi, harness/testcluster/cdi).

.PHONY: verify
verify: generate ## Regenerate, then fail if anything changed.
	git diff --exit-code
