"""The layout's promises, checked on the source: adapters ask the codec contract what a format can do and never which
format it is; they import the contract, the plugin registry and the envelopes, never a format module; format modules
share code only through the kit."""

from __future__ import annotations

import ast
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
                   *(PACKAGE / name for name in ("cli.py", "convert.py", "demo.py", "options.py"))])
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
