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

# The JVM decoders, compiled against the venv's PySpark whenever a Java source is newer than the jar (pip's isolated
# build has no PySpark to compile them with).
JAR := cdcformats/spark/jvm/cdcformats.jar
$(JAR): $(INSTALLED) $(shell find cdcformats -name '*.java')
	$(BIN)/python setup.py --quiet build_jar

jar: $(JAR)

# Two processes; the integration tests keep to one of them (tests/conftest.py). CI runs this one.
test: $(INSTALLED) $(JAR)
	$(BIN)/python -m pytest -n 2 --dist loadgroup

# The same tests with 50 Hypothesis examples per property instead of 500 (the dev profile), for quick local runs.
test-fast: $(INSTALLED) $(JAR)
	HYPOTHESIS_PROFILE=dev $(BIN)/python -m pytest -n 2 --dist loadgroup

demo: $(INSTALLED) $(JAR)
	$(BIN)/cdcformats demo

# Every benchmark, each against its floor measured in the same run (several minutes; the 1 GB conversion and the
# Spark runs take most of it).
benchmark: $(INSTALLED) $(JAR)
	$(BIN)/python benchmarks/codec_throughput.py
	$(BIN)/python benchmarks/model_floor.py
	$(BIN)/python benchmarks/convert_memory.py
	$(BIN)/python benchmarks/spark_decode.py

# Regenerate cdcformats/schemas/change_event_pb2.py after changing the .proto.
protobuf: $(INSTALLED)
	$(BIN)/python scripts/generate_protobuf.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
