# Developer entry points. Only Python 3.11+ and make are needed: everything else goes into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python

.PHONY: run test certs bench clean controlplane lock

# Dependencies are installed from lock files, every version pinned with its hashes, so a new release
# upstream changes nothing here or in the image until the locks are regenerated:
#   requirements.lock       what the package needs to run (the Dockerfile installs this one),
#   requirements-test.lock  that, at the same versions, and pyproject.toml's `test` extra,
#   requirements-helm.lock  helm-sdkpy (HELM_SDKPY below), installed on its own.
# pyproject.toml keeps the ranges the package accepts; the project itself is installed with --no-deps.
LOCKS := requirements.lock requirements-test.lock requirements-helm.lock

# The Kubernetes control plane the cluster test tier runs against (tests/cluster), kubelet for the
# node tier (tests/node), helm and promtool, built from the Go modules of these releases into a
# cache outside the repository;
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

$(VENV)/.installed: requirements.lock pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --require-hashes -r requirements.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

# helm-sdkpy ships Helm's Go library, which tests/deploy loads to render the chart with Helm itself.
# Its metadata asks for Python 3.12, but only the shared library is used (through ctypes). Changing
# this pin takes a `make lock`.
HELM_SDKPY := helm-sdkpy==0.1.32

$(VENV)/.installed-test: $(LOCKS) pyproject.toml Makefile | $(PY)
	$(PY) -m pip install --quiet --require-hashes -r requirements-test.lock
	$(PY) -m pip install --quiet --require-hashes --no-deps --ignore-requires-python -r requirements-helm.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@ $(VENV)/.installed

# make lock: rewrites the three lock files from pyproject.toml and HELM_SDKPY, with uv (installed
# into .venv; only this target needs it, installing from the locks takes plain pip). Run it after
# changing a dependency in pyproject.toml: versions already locked stay where pyproject.toml still
# allows them, a dependency added or removed comes or goes with what only it needed. The locks are
# universal (markers, and the hashes of every wheel of each version): one file serves Linux x86_64
# and aarch64 alike. `make lock UPGRADE=1` moves everything to the newest versions allowed.
# The next `make run` or `make test` installs the new locks.
UV_VERSION := 0.13.9
UV_COMPILE := $(BIN)/uv pip compile --quiet --python $(PY) --no-python-downloads --universal \
	--generate-hashes --custom-compile-command 'make lock' $(if $(UPGRADE),--upgrade)

lock: | $(PY)
	$(PY) -m pip install --quiet 'uv==$(UV_VERSION)'
	$(UV_COMPILE) --python-version 3.11 pyproject.toml -o requirements.lock
	$(UV_COMPILE) --python-version 3.11 pyproject.toml --extra test -c requirements.lock -o requirements-test.lock
	echo '$(HELM_SDKPY)' | $(UV_COMPILE) --python-version 3.12 --no-deps - -o requirements-helm.lock

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
