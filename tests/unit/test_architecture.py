"""The layout's promises, checked on the source: adapters ask the codec contract what a format can do and never which
format it is; they import the contract, the plugin registry and the envelopes, never a format module; format modules
share code only through the kit."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

import cdcformats as cf

PACKAGE = Path(cf.__file__).parent
FORMATS_PACKAGE = "cdcformats.codecs"
KIT = "cdcformats.codecs._kit"

# Everything that serves formats to users without being one (the plugin registry, whose table names each built-in
# format's module, is not among them).
ADAPTERS = sorted([*(PACKAGE / "kafka").glob("*.py"), *(PACKAGE / "spark").glob("*.py"),
                   *(PACKAGE / "schema_registry").glob("*.py"),
                   *(PACKAGE / name for name in ("cli.py", "convert.py", "demo.py", "loss_probes.py", "options.py",
                                                 "pipeline.py"))])
FORMAT_MODULES = sorted(path for path in (PACKAGE / "codecs").glob("*.py") if path.name != "__init__.py")
KIT_MODULES = sorted((PACKAGE / "codecs" / "_kit").glob("*.py"))
# A format's own parts, which only it imports: Lindorm's Arrow batch decoder; and the format a format's messages
# hold: a paimon-log value is a debezium-json message (Paimon's log.format).
PARTS = {"lindorm": {"lindorm_arrow"}, "paimon": {"debezium"}}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """The absolute names of every module ``path`` imports (a ``from X import y`` counts X and X.y)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def test_the_layout_is_what_the_checks_read() -> None:
    assert len(ADAPTERS) >= 8 and len(FORMAT_MODULES) >= 11 and len(KIT_MODULES) >= 5
    assert {path.stem for path in FORMAT_MODULES} >= {"lindorm", "arcion", "ots", "debezium", "canal"}


@pytest.mark.parametrize("path", ADAPTERS, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_adapters_import_no_format_module_and_not_the_kit(path: Path) -> None:
    reaching = sorted(name for name in imported(path) if name.startswith(FORMATS_PACKAGE + "."))
    assert not reaching, f"{path.relative_to(PACKAGE)} imports {reaching}: ask the codec contract instead"


@pytest.mark.parametrize("path", FORMAT_MODULES, ids=lambda path: path.name)
def test_format_modules_import_no_other_format_module(path: Path) -> None:
    own = PARTS.get(path.stem, set())
    others = sorted(name for name in imported(path)
                    if name.startswith(FORMATS_PACKAGE + ".") and not name.startswith(KIT)
                    and name.split(".")[2] not in {path.stem, *own})
    assert not others, f"{path.name} imports {others}: share through cdcformats.codecs._kit"


@pytest.mark.parametrize("path", KIT_MODULES, ids=lambda path: path.name)
def test_the_kit_imports_no_format_module(path: Path) -> None:
    formats = sorted(name for name in imported(path) if name.startswith(FORMATS_PACKAGE + ".")
                     and not name.startswith(KIT))
    assert not formats, f"_kit/{path.name} imports {formats}"


def format_names_in_code(source: str) -> list[str]:
    """Each string constant of ``source`` that is a format's name, other than docstrings and click's help texts, as
    'line N: name'."""
    tree = ast.parse(source)
    names = set(cf.formats())
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                allowed.add(id(body[0].value))
        if isinstance(node, ast.keyword) and node.arg == "help":
            allowed.update(id(inner) for inner in ast.walk(node.value))
    found = [node for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and node.value in names and id(node) not in allowed]
    return [f"line {node.lineno}: {node.value}" for node in sorted(found, key=lambda node: node.lineno)]


@pytest.mark.parametrize("path", ADAPTERS, ids=lambda path: str(path.relative_to(PACKAGE)))
def test_adapters_never_name_a_format(path: Path) -> None:
    named = format_names_in_code(path.read_text(encoding="utf-8"))
    assert not named, f"{path.relative_to(PACKAGE)} names formats ({', '.join(named)}): declare a capability on the " \
                      "codec (cdcformats.contract) and ask for it"


def test_the_name_check_finds_a_format_named_in_code() -> None:
    source = ('"""Says avro in its docstring."""\n\n@option("--to", help="lindorm or arcion")\n'
              'def events(): return codec("ots")\n\nSPECIAL = {"ots-json": 1}\n')
    assert format_names_in_code(source) == ["line 4: ots", "line 6: ots-json"]


# -- layers -----------------------------------------------------------------------------------------------------------

# The package's layers, from the bottom up: a module imports modules of its own layer or of the layers below it,
# never of one above, and no modules import each other in a circle. A module is in the layer of the longest name
# here that is its own name or a package holding it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # What everything stands on: the canonical event, the errors, and what the contract, the envelopes and the
    # formats share (typed text, time units, error modes, the typed tables, the envelopes' schema files).
    ("core", ("cdcformats.core", "cdcformats.model", "cdcformats.errors", "cdcformats.tables", "cdcformats.schemas",
              "cdcformats.samples", "cdcformats.examples")),
    # What a format is, what a conversion drops, and which formats exist (the registry names the formats' modules
    # only as text, imported when first asked for).
    # cf.loss()'s probes of a conversion, which ask codecs given to them.
    ("contract", ("cdcformats.contract", "cdcformats.losses", "cdcformats.registry", "cdcformats.loss_probes")),
    # Where envelopes get their schema ids: debezium-avro asks it, as the Kafka serializers and the command line do.
    ("schema registry", ("cdcformats.schema_registry",)),
    ("formats", ("cdcformats.codecs", "cdcformats.envelopes")),
    # What serves every format to users without being one: the conversion pipeline, and what runs it.
    ("adapters", ("cdcformats.options", "cdcformats.pipeline", "cdcformats.convert", "cdcformats.kafka",
                  "cdcformats.spark")),
    # The faces: the command line, the demo, and the package's own names.
    ("front", ("cdcformats.cli", "cdcformats.demo", "cdcformats")),
)
MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of ``module``'s layer (``KeyError`` for a module in none)."""
    owners = [(len(prefix), index) for index, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes
              if module == prefix or module.startswith(prefix + ".")]
    if not owners:
        raise KeyError(module)
    return max(owners)[1]


def module_imports(path: Path, modules: Iterable[str], source: str | None = None) -> dict[str, int]:
    """The ``modules`` that the module at ``path`` (its text, or ``source``) imports, anywhere in it (under
    ``TYPE_CHECKING`` and inside functions too), each with the line of its first import: ``from X import y`` imports
    the module X.y where there is one, else X."""
    known = set(modules)
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8") if source is None else source)):
        targets = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        for target in targets:
            if target in known and node.lineno < found.get(target, node.lineno + 1):
                found[target] = node.lineno
    return found


def import_graph() -> dict[str, dict[str, int]]:
    return {module: module_imports(path, MODULES) for module, path in MODULES.items()}


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Each set of modules that import each other in a loop (Tarjan's strongly connected components of more than one
    module, or a module that imports itself), as one loop through them: ``[a, b, ..., a]``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph.get(module, {}):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == module:
                    break
            if len(component) > 1 or module in graph.get(module, {}):
                found.append(loop_through(set(component), graph))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def loop_through(component: set[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """One loop of imports through ``component``, from its first module (by name) back to it."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        module = queue.pop(0)
        for target in sorted(graph[module]):
            if target == start:
                return [*paths[module], start]
            if target in component and target not in paths:
                paths[target] = [*paths[module], target]
                queue.append(target)
    raise AssertionError(f"no loop through {sorted(component)}")


def imports_running_back_up(graph: dict[str, dict[str, int]]) -> list[str]:
    """Each import of a module from a layer above the importer's, as 'importer (layer) line N imports target
    (layer)'."""
    return [f"{module} ({LAYERS[layer_of(module)][0]}) line {line} imports {target} ({LAYERS[layer_of(target)][0]})"
            for module, targets in sorted(graph.items()) for target, line in sorted(targets.items())
            if layer_of(target) > layer_of(module)]


def describe(loop: list[str], graph: dict[str, dict[str, int]]) -> str:
    return " -> ".join(f"{module} (line {graph[module][target]})" for module, target in zip(loop, loop[1:])) \
        + f" -> {loop[-1]}"


def test_every_module_is_in_a_layer() -> None:
    unplaced = []
    for module in MODULES:
        try:
            layer_of(module)
        except KeyError:
            unplaced.append(module)
    assert not unplaced, f"{unplaced} are in no layer: place them in LAYERS"
    assert len(MODULES) > 60 and {"cdcformats.contract", "cdcformats.core.typed_text"} <= set(MODULES)


def test_no_modules_import_each_other_in_a_circle() -> None:
    graph = import_graph()
    found = circles(graph)
    assert not found, "import circles: " + "; ".join(describe(loop, graph) for loop in found)


def test_no_import_runs_back_up_a_layer() -> None:
    back_up = imports_running_back_up(import_graph())
    assert not back_up, "imports that run back up a layer: " + "; ".join(back_up)


def test_the_layer_checks_find_a_circle_and_an_import_back_up() -> None:
    graph = {"cdcformats.contract": {"cdcformats.envelopes.arrow": 26},
             "cdcformats.envelopes.arrow": {"cdcformats.options": 45, "cdcformats.model": 44},
             "cdcformats.options": {"cdcformats.contract": 15}, "cdcformats.model": {}}
    [loop] = circles(graph)
    assert describe(loop, graph) == ("cdcformats.contract (line 26) -> cdcformats.envelopes.arrow (line 45) -> "
                                     "cdcformats.options (line 15) -> cdcformats.contract")
    assert imports_running_back_up(graph) == [
        "cdcformats.contract (contract) line 26 imports cdcformats.envelopes.arrow (formats)",
        "cdcformats.envelopes.arrow (formats) line 45 imports cdcformats.options (adapters)"]
    assert circles({"cdcformats.model": {"cdcformats.errors": 1}, "cdcformats.errors": {}}) == []


def test_module_imports_resolve_relative_typing_and_lazy_imports() -> None:
    known = {"cdcformats.contract", "cdcformats.core", "cdcformats.core.typed_text", "cdcformats.codecs",
             "cdcformats.codecs.debezium", "cdcformats.registry", "cdcformats.model"}
    source = ("from typing import TYPE_CHECKING\nfrom ..contract import Codec\nfrom ..core import typed_text\n"
              "from .debezium import DebeziumJsonCodec\nif TYPE_CHECKING:\n    import cdcformats.registry\n"
              "def later():\n    from ..core.typed_text import render\n    from ..model import Op\n")
    assert module_imports(PACKAGE / "codecs" / "paimon.py", known, source) == {
        "cdcformats.contract": 2, "cdcformats.core.typed_text": 3, "cdcformats.codecs.debezium": 4,
        "cdcformats.registry": 6, "cdcformats.model": 9}


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("__init__.py")), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_a_package_init_only_hands_names_on(path: Path) -> None:
    """An ``__init__.py`` holds a docstring, imports, ``__all__`` and (the package's own) ``__version__``: no logic."""
    logic = [f"line {node.lineno}: {ast.unparse(node).splitlines()[0]}"
             for node in ast.parse(path.read_text(encoding="utf-8")).body
             if not (isinstance(node, (ast.Import, ast.ImportFrom))
                     or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
                     or (isinstance(node, ast.Assign) and all(isinstance(target, ast.Name) and target.id in
                                                              {"__all__", "__version__"} for target in node.targets)))]
    assert not logic, f"{path.relative_to(PACKAGE)} holds logic ({'; '.join(logic)}): move it into a module"
