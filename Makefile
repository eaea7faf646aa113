# `make test` and `make demo` set up everything they need: a virtual environment at .venv with the project and its
# test extras installed (re-installed when pyproject.toml changes).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: test test-fast demo venv jar protobuf benchmark clean

venv: $(INSTALLED)

$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(INSTALLED)

# The JVM decoders again after changing their Java sources (pip install builds them too).
jar: $(INSTALLED)
	$(BIN)/python setup.py --quiet build_jar

# Two processes; the integration tests keep to one of them (tests/conftest.py). CI runs this one.
test: $(INSTALLED)
	$(BIN)/python -m pytest -n 2 --dist loadgroup

# The same tests with 50 Hypothesis examples per property instead of 500 (the dev profile), for quick local runs.
test-fast: $(INSTALLED)
	HYPOTHESIS_PROFILE=dev $(BIN)/python -m pytest -n 2 --dist loadgroup

demo: $(INSTALLED)
	$(BIN)/cdcformats demo

# Every benchmark, each against its floor measured in the same run (several minutes; the 1 GB conversion and the
# Spark runs take most of it).
benchmark: $(INSTALLED)
	$(BIN)/python benchmarks/codec_throughput.py
	$(BIN)/python benchmarks/model_floor.py
	$(BIN)/python benchmarks/convert_memory.py
	$(BIN)/python benchmarks/spark_decode.py

# Regenerate cdcformats/schemas/change_event_pb2.py after changing the .proto.
protobuf: $(INSTALLED)
	$(BIN)/python scripts/generate_protobuf.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
