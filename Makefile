# Developer entry points. Only Python 3.11+ and make are needed: everything else goes into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python

.PHONY: run test certs bench clean

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
	$(PY) -m webhook certs --out certs --hosts localhost,127.0.0.1

run: certs
	$(PY) -m webhook serve --host 127.0.0.1 --port 8443 \
		--tls-cert certs/tls.crt --tls-key certs/tls.key --objects examples/objects

test: $(VENV)/.installed-test
	$(PY) -m pytest

bench: $(VENV)/.installed-test
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) certs/*.crt certs/*.key
