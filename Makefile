# `make test` and `make demo` set up everything they need: a virtual environment at .venv with the project and its
# test extras installed (re-installed when pyproject.toml changes).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: test test-fast demo venv jar kafka connectors peers protobuf benchmark clean

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

# The local Kafka broker's jars (cdcformats.kafka.broker: `cdcformats broker`, the tests' kafka_broker fixture),
# fetched once with Maven into a cache outside git ($CDCFORMATS_KAFKA_HOME, or ~/.cache/cdcformats/kafka-<version>);
# a second run finds them there and fetches nothing.
kafka: $(INSTALLED)
	$(BIN)/cdcformats broker --fetch-only

# Spark's Kafka source and Delta Lake for the venv's PySpark (cdcformats.spark.connectors: `cdcformats stream`), fetched
# once with Maven into a cache outside git (~/.cache/cdcformats/spark-<version>-streaming).
connectors: $(INSTALLED)
	$(BIN)/python -c 'from cdcformats.spark.connectors import streaming_jars; streaming_jars()'

# The real producers the peer tests run (tests/peers): Debezium's embedded engine and Kafka Connect's JsonConverter,
# fetched from Maven Central into a cache outside git and compiled there, and PostgreSQL and MariaDB from Debian's
# packages when the machine has none (as root; otherwise install them yourself).
export CDCFORMATS_PEERS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/cdcformats/peers
PEER_CLASSES := $(CDCFORMATS_PEERS)/classes/.compiled
$(PEER_CLASSES): tests/peers/pom.xml $(wildcard tests/peers/java/*.java)
	mvn -B -q -f tests/peers/pom.xml dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory=$(CDCFORMATS_PEERS)/lib
	mkdir -p $(CDCFORMATS_PEERS)/classes
	javac -nowarn -d $(CDCFORMATS_PEERS)/classes -cp '$(CDCFORMATS_PEERS)/lib/*' tests/peers/java/*.java
	touch $@

# Alibaba Canal, whose dependencies clash with Debezium's: a classpath of its own.
export CDCFORMATS_PEERS_CANAL ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/cdcformats/peers-canal
PEER_CANAL_CLASSES := $(CDCFORMATS_PEERS_CANAL)/classes/.compiled
$(PEER_CANAL_CLASSES): tests/peers/canal/pom.xml $(wildcard tests/peers/canal/java/*.java)
	mvn -B -q -f tests/peers/canal/pom.xml dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory=$(CDCFORMATS_PEERS_CANAL)/lib
	mkdir -p $(CDCFORMATS_PEERS_CANAL)/classes
	javac -nowarn -d $(CDCFORMATS_PEERS_CANAL)/classes -cp '$(CDCFORMATS_PEERS_CANAL)/lib/*' tests/peers/canal/java/*.java
	touch $@

peers: $(PEER_CLASSES) $(PEER_CANAL_CLASSES)
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || \
		(apt-get update -q && apt-get install -y -q --no-install-recommends postgresql)
	@test -x /usr/sbin/mariadbd || command -v mariadbd >/dev/null || \
		(apt-get update -q && apt-get install -y -q --no-install-recommends mariadb-server mariadb-client)

# Three processes for two cores: the Spark integration tests keep to one and the other integration tests to another
# (tests/conftest.py), and they wait on brokers, databases and JVMs, which two processes left a core idle for (1.37
# cores busy on average); the third runs the rest meanwhile. CI runs this one.
test: $(INSTALLED) $(JAR) kafka connectors peers
	$(BIN)/python -m pytest -n 3 --dist loadgroup --durations=25

# The same tests with 50 Hypothesis examples per property instead of 300 (the dev profile), for quick local runs.
test-fast: $(INSTALLED) $(JAR) kafka connectors peers
	HYPOTHESIS_PROFILE=dev $(BIN)/python -m pytest -n 3 --dist loadgroup

demo: $(INSTALLED) $(JAR) kafka connectors
	$(BIN)/cdcformats demo

# Every benchmark, each against its floor measured in the same run (several minutes; the 1 GB conversion and the
# Spark runs take most of it).
benchmark: $(INSTALLED) $(JAR) kafka connectors
	$(BIN)/python benchmarks/codec_throughput.py
	$(BIN)/python benchmarks/model_floor.py
	$(BIN)/python benchmarks/kafka_serdes.py
	$(BIN)/python benchmarks/local_broker.py
	$(BIN)/python benchmarks/convert_memory.py
	$(BIN)/python benchmarks/spark_decode.py
	$(BIN)/python benchmarks/streaming.py

# Regenerate cdcformats/schemas/change_event_pb2.py after changing the .proto.
protobuf: $(INSTALLED)
	$(BIN)/python scripts/generate_protobuf.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
