"""The package build: setuptools, plus one step that puts the JVM decoders (``cdcformats/**/*.java``) into
``cdcformats/spark/jvm/cdcformats.jar``, which ``cdcformats.spark.register`` puts on Spark's classpath.

The jar is compiled against PySpark's jars where ``javac`` (a JDK 17 or newer) and PySpark are at hand, as in the
project's virtual environment (``make jar``). A build without them, such as pip's isolated build of a clone (PySpark
is no build requirement: the command line needs neither), takes the jar already built beside the sources when it is
newer than every Java source, and otherwise goes on without it and says so once: the package then decodes in Spark
with its Arrow functions only."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from setuptools import Command, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
JAR = Path("cdcformats", "spark", "jvm", "cdcformats.jar")


def build_jar(destination: Path) -> None:
    javac = shutil.which("javac")
    try:
        import pyspark
    except ImportError:
        pyspark = None
    sources = sorted(str(path) for path in (HERE / "cdcformats").rglob("*.java"))
    if javac is None or pyspark is None:
        built = HERE / JAR
        if built.exists() and all(built.stat().st_mtime >= Path(source).stat().st_mtime for source in sources):
            if built != destination:
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(built, destination)
            return
        print(f"warning: {'javac' if javac is None else 'pyspark'} not found, so {JAR} is not built; "
              "cdc_decode will run as an Arrow UDF only", file=sys.stderr)
        return
    jars = Path(pyspark.__file__).parent / "jars"
    with tempfile.TemporaryDirectory() as classes:
        subprocess.run([javac, "--release", "17", "-nowarn", "-encoding", "UTF-8", "-cp", f"{jars}/*",
                        "-d", classes, *sources], check=True)
        destination.parent.mkdir(parents=True, exist_ok=True)
        partial = destination.with_suffix(".partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
            for path in sorted(Path(classes).rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
        partial.replace(destination)  # never a half-written jar


class BuildPyWithJar(build_py):
    def run(self) -> None:
        super().run()
        # An editable install imports the sources in place, so the jar goes beside them.
        build_jar(HERE / JAR if self.editable_mode else Path(self.build_lib) / JAR)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), str(Path(self.build_lib) / JAR)]


class BuildJar(Command):
    """``python setup.py build_jar``: the jar alone, beside the sources (``make jar``)."""

    description = "compile the JVM decoders into " + str(JAR)
    user_options: list = []

    def initialize_options(self) -> None:
        pass

    def finalize_options(self) -> None:
        pass

    def run(self) -> None:
        build_jar(HERE / JAR)


setup(cmdclass={"build_py": BuildPyWithJar, "build_jar": BuildJar})
