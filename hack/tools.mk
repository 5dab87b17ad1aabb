# hack/tools.mk: pinned build and generation tools, built into $(BIN).
# Included from the top-level Makefile. Binaries are built to a temporary
# name and renamed, so running test clusters keep their (old) executable. Each tool target is a stamp file
# named after the pinned version, so a tool is rebuilt only when its
# version changes or the stamp is missing. Run from the repository root.

BIN ?= $(CURDIR)/bin
TOOLS_DIR := $(CURDIR)/hack/tools
# Each tool binary is also kept outside the clone (hack/cached-tool.sh:
# $$TOOLS_CACHE, default ~/.cache/redfish-bridge/tools, keyed by its module's
# go.mod/go.sum, flags and Go version), so a fresh clone copies it.
CACHED_TOOL := $(CURDIR)/hack/cached-tool.sh

KUBE_VERSION           ?= v1.37.2
ETCD_VERSION           ?= v3.7.0
HELM_VERSION           ?= v3.22.0
CONTROLLER_GEN_VERSION ?= v0.20.1
KUBEVIRT_VERSION       ?= v1.9.0
GOLANGCI_LINT_VERSION  ?= v2.15.0
CDI_VERSION            ?= v1.66.0

KUBE_APISERVER := $(BIN)/kube-apiserver
KUBECTL        := $(BIN)/kubectl
ETCD           := $(BIN)/etcd
HELM           := $(BIN)/helm
CONTROLLER_GEN := $(BIN)/controller-gen
VIRT_CONTROLLER := $(BIN)/virt-controller
VIRT_API       := $(BIN)/virt-api
GOLANGCI_LINT  := $(BIN)/golangci-lint

# Built from the module proxy, kube binaries would report v0.0.0-master;
# stamp the real version so /version and helm's .Capabilities see 1.37.
KUBE_LDFLAGS := -s -w \
	-X k8s.io/component-base/version.gitVersion=$(KUBE_VERSION) \
	-X k8s.io/component-base/version.gitMajor=1 \
	-X k8s.io/component-base/version.gitMinor=37 \
	-X k8s.io/component-base/version.gitTreeState=clean

# helm defaults .Capabilities.KubeVersion (and lint's deprecation checks) to
# 1.20 unless told which Kubernetes its client libraries are.
HELM_LDFLAGS := -s -w \
	-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
	-X helm.sh/helm/v3/internal/version.gitTreeState=clean \
	-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 \
	-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=37 \
	-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 \
	-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=37

.PHONY: tools kube-apiserver kubectl etcd helm controller-gen virt-controller virt-api cdi golangci-lint generate-crds generate-webhooks generate-cdi

tools: kube-apiserver kubectl etcd helm controller-gen virt-controller virt-api cdi ## Build the pinned tools into bin/

kube-apiserver: $(BIN)/.kube-apiserver-$(KUBE_VERSION)
kubectl: $(BIN)/.kubectl-$(KUBE_VERSION)
etcd: $(BIN)/.etcd-$(ETCD_VERSION)
helm: $(BIN)/.helm-$(HELM_VERSION)
controller-gen: $(BIN)/.controller-gen-$(CONTROLLER_GEN_VERSION)
virt-controller: $(BIN)/.virt-controller-$(KUBEVIRT_VERSION)
virt-api: $(BIN)/.virt-api-$(KUBEVIRT_VERSION)
cdi: $(BIN)/.cdi-$(CDI_VERSION)
# Not part of `tools` (the tests do not need it): `make lint` builds it.
golangci-lint: $(BIN)/.golangci-lint-$(GOLANGCI_LINT_VERSION)

$(BIN)/.kube-apiserver-$(KUBE_VERSION):
	@mkdir -p $(BIN)
	$(CACHED_TOOL) $(KUBE_APISERVER) $(TOOLS_DIR)/kube "$(KUBE_LDFLAGS)" -- go build -trimpath -ldflags "$(KUBE_LDFLAGS)" -o $(KUBE_APISERVER).tmp k8s.io/kubernetes/cmd/kube-apiserver
	@touch $@

$(BIN)/.kubectl-$(KUBE_VERSION):
	@mkdir -p $(BIN)
	$(CACHED_TOOL) $(KUBECTL) $(TOOLS_DIR)/kube "$(KUBE_LDFLAGS)" -- go build -trimpath -ldflags "$(KUBE_LDFLAGS)" -o $(KUBECTL).tmp k8s.io/kubernetes/cmd/kubectl
	@touch $@

$(BIN)/.etcd-$(ETCD_VERSION):
	@mkdir -p $(BIN)
	$(CACHED_TOOL) $(ETCD) $(TOOLS_DIR)/etcd "" -- go build -trimpath -o $(ETCD).tmp .
	@touch $@

$(BIN)/.helm-$(HELM_VERSION):
	@mkdir -p $(BIN)
	$(CACHED_TOOL) $(HELM) $(TOOLS_DIR)/helm "$(HELM_LDFLAGS)" -- go build -trimpath -ldflags "$(HELM_LDFLAGS)" -o $(HELM).tmp helm.sh/helm/v3/cmd/helm
	@touch $@

$(BIN)/.controller-gen-$(CONTROLLER_GEN_VERSION):
	@mkdir -p $(BIN)
	$(CACHED_TOOL) $(CONTROLLER_GEN) $(TOOLS_DIR)/controller-gen "-s -w" -- go build -trimpath -ldflags "-s -w" -o $(CONTROLLER_GEN).tmp sigs.k8s.io/controller-tools/cmd/controller-gen
	@touch $@

# KubeVirt's own virt-controller, which the test cluster and the demo run
# (hack/tools/kubevirt: kubevirt's replace block, the published
# kubevirt.io/api and client-go, stubs for the two virt-template modules
# the module proxy refuses). Pure Go: CGO off. The slowest tool by far
# (see docs/testing-kubevirt.md: the first build).
$(BIN)/.virt-controller-$(KUBEVIRT_VERSION):
	@mkdir -p $(BIN)
	$(CACHED_TOOL) $(VIRT_CONTROLLER) $(TOOLS_DIR)/kubevirt "CGO_ENABLED=0 -s -w" -- env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o $(VIRT_CONTROLLER).tmp kubevirt.io/kubevirt/cmd/virt-controller
	@touch $@

# KubeVirt's virt-api, for its admission webhooks (harness/testcluster
# Options.VirtAPI). Same module as virt-controller: after it, 3.5 min more
# on the loaded 2-core machine (37 s of CPU; see docs/testing-kubevirt.md).
$(BIN)/.virt-api-$(KUBEVIRT_VERSION):
	@mkdir -p $(BIN)
	$(CACHED_TOOL) $(VIRT_API) $(TOOLS_DIR)/kubevirt "CGO_ENABLED=0 -s -w" -- env CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o $(VIRT_API).tmp kubevirt.io/kubevirt/cmd/virt-api
	@touch $@

# CDI's own cdi-controller and cdi-apiserver, from the unmodified tree in
# ../shared/third_party (the module proxy refuses CDI's main module), built
# once per machine into the tool cache by hack/cdi.sh (keyed by the tree,
# hack/cdi, the Go version; 10-25 min cold on the loaded 2-core machine) and
# copied into $(BIN). Without the tree (and not under CI=true) nothing is
# built and the tests that need them skip.
CDI_SRC ?= $${CDI_THIRD_PARTY:-../shared/third_party}/containerized-data-importer-$(CDI_VERSION:v%=%)

$(BIN)/.cdi-$(CDI_VERSION):
	@mkdir -p $(BIN)
	@if [ "$$CI" = true ] || [ -d "$(CDI_SRC)" ]; then \
	  hack/cdi.sh install $(BIN) && touch $@; \
	else echo "cdi: not built (no $(CDI_SRC)): the tests that run CDI skip"; fi

$(BIN)/.golangci-lint-$(GOLANGCI_LINT_VERSION):
	@mkdir -p $(BIN)
	$(CACHED_TOOL) $(GOLANGCI_LINT) $(TOOLS_DIR)/golangci-lint "-s -w" -- go build -trimpath -ldflags "-s -w" -o $(GOLANGCI_LINT).tmp github.com/golangci/golangci-lint/v2/cmd/golangci-lint
	@touch $@

# controller-gen runs inside hack/gencrd/source, a module pinning
# kubevirt.io/api v1.9.0 with the k8s.io/api it was released with, so the
# schema matches virt-operator's; hack/gencrd adds what the operator adds
# and writes crds/stock and crds/maplist.
CRD_TMP := $(BIN)/.crdgen.tmp

generate-crds: controller-gen ## Regenerate crds/stock and crds/maplist from kubevirt.io/api
	@rm -rf $(CRD_TMP)
	cd hack/gencrd/source && $(CONTROLLER_GEN) crd:allowDangerousTypes=true paths=kubevirt.io/api/core/v1 output:crd:dir=$(CRD_TMP)
	go run ./hack/gencrd -in $(CRD_TMP) -out crds
	@rm -rf $(CRD_TMP)
	rm -f crds/kubevirt/*.yaml
	cd $(TOOLS_DIR)/kubevirt && CGO_ENABLED=0 go run ./kubevirt-crds $(CURDIR)/crds/kubevirt

# virt-api's webhook configurations as virt-operator v1.9.0 installs them;
# harness/testcluster points them at its loopback virt-api.
generate-webhooks: ## Regenerate harness/testcluster/webhooks from KubeVirt's virt-operator
	rm -f harness/testcluster/webhooks/*.yaml
	cd $(TOOLS_DIR)/kubevirt && CGO_ENABLED=0 go run ./kubevirt-webhooks $(CURDIR)/harness/testcluster/webhooks

# What CDI v1.66.0's operator installs (its CRDs into crds/cdi; the
# APIService, webhook configurations, RBAC and Deployments of cdi-apiserver
# and cdi-controller into harness/testcluster/cdi), printed by its own
# factories (hack/cdi/manifests, built by hack/cdi.sh beside the programs).
generate-cdi: ## Regenerate crds/cdi and harness/testcluster/cdi from CDI's operator code
	hack/cdi.sh generate
