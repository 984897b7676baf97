# Developer entry points. Only Python 3.11+ and make are needed: everything else goes into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python

.PHONY: run test certs bench clean controlplane

# The Kubernetes control plane the cluster test tier runs against (tests/cluster), with helm and
# promtool, built from the Go modules of these releases into a cache outside the repository;
# KUBE_VERSION=1.34.4 builds the oldest release the README supports. With KUBEBUILDER_ASSETS set
# (envtest's binaries), nothing is built and the tier uses those; without either Go or
# KUBEBUILDER_ASSETS the tier is skipped.
KUBE_VERSION ?= 1.37.2
HELM_VERSION ?= 3.22.0
PROMETHEUS_VERSION ?= 0.316.0
CONTROLPLANE_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/grove-sharing-webhook/controlplane
CONTROLPLANE := $(CONTROLPLANE_CACHE)/$(KUBE_VERSION)

$(PY):
	$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

# helm-sdkpy ships Helm's Go library, which tests/deploy loads to render the chart with Helm itself.
# Its metadata asks for Python 3.12, but only the shared library is used (through ctypes).
HELM_SDKPY := helm-sdkpy==0.1.32

$(VENV)/.installed-test: pyproject.toml Makefile | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m pip install --quiet --no-deps --ignore-requires-python '$(HELM_SDKPY)'
	touch $@ $(VENV)/.installed

certs: $(VENV)/.installed
	$(PY) -m webhook certs --out certs --cert-hosts localhost,127.0.0.1

run: certs
	$(PY) -m webhook serve --host 127.0.0.1 --port 8443 \
		--tls-cert certs/tls.crt --tls-key certs/tls.key --objects examples/objects

controlplane:
	hack/controlplane.sh $(KUBE_VERSION) $(HELM_VERSION) $(PROMETHEUS_VERSION) $(CONTROLPLANE)

ifeq ($(KUBEBUILDER_ASSETS)$(shell command -v go),)
TEST_ASSETS :=
else ifneq ($(KUBEBUILDER_ASSETS),)
TEST_ASSETS := $(KUBEBUILDER_ASSETS)
else
TEST_ASSETS := $(CONTROLPLANE)
test: controlplane
endif

test: $(VENV)/.installed-test
	KUBEBUILDER_ASSETS=$(TEST_ASSETS) $(PY) -m pytest

bench: $(VENV)/.installed-test
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) certs/*.crt certs/*.key
