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

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
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
