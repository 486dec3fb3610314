# The README's two commands: `make run` and `make test`. Both set everything up from nothing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup run test lint typecheck unit model browser wheel clean

setup: $(STAMP) model

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

# Export the bundled MiniLM weights to ONNX int8 once (cached under ~/.cache/strata/models,
# or STRATA_MODEL_CACHE); offline and reproducible, a no-op when the export exists.
model: $(STAMP)
	$(BIN)/python -m strata_recall.embedders.onnx

# The installable wheel (the model's weights staged into it), checked in a fresh venv:
# no torch, install size, import time, the README snippet offline. Prints a JSON report.
wheel: $(STAMP)
	rm -rf build/wheel
	$(BIN)/python scripts/check_wheel.py --keep build/wheel

run: setup
	$(BIN)/strata serve

lint: $(STAMP)
	$(BIN)/ruff check src tests scripts

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q

# The UI's browser tests drive the system chromium (Playwright never downloads one): install
# it quietly when it is missing and apt-get can run as root; otherwise those tests skip and
# say so loudly.
browser:
	@if [ -z "$$STRATA_CHROMIUM" ] && ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium for the UI browser tests"; \
	    (apt-get install -y -qq chromium >/dev/null 2>&1 || \
	     (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1)) \
	      || echo "WARNING: could not install chromium: the UI browser tests will skip"; \
	  else echo "WARNING: no chromium and no root apt-get: the UI browser tests will skip"; fi; \
	fi

# pytest exits 5 when it collected no test: said plainly, and a failure here too.
test: setup lint typecheck browser
	@$(BIN)/pytest -q; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests: failing on purpose"; fi; \
	exit $$status

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
