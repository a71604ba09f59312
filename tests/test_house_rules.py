"""The house rules of docs/ARCHITECTURE.md, checked on the source rather than trusted.

Underscore names never leave their module; no actloop module is imported by name, where the import
contracts cannot see it; the document names every module and draws the contract's layer line; test
modules take their helpers from `tests/support`, never from a conftest.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 (pytest depends on tomli there)
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "actloop"
TESTS = ROOT / "tests"
DOC = ROOT / "docs" / "ARCHITECTURE.md"


def _module_name(path: Path) -> str:
    """`actloop.executor._loop` for src/actloop/executor/_loop.py, `actloop.tools` for its init."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


SOURCES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
"""Every module of actloop by dotted name."""


def _private(name: str) -> bool:
    """A leading underscore, and not a dunder (`__version__`, `__all__` are public)."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _target(module: str, node: ast.ImportFrom) -> str:
    """The absolute module an `ImportFrom` reads from (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    package = module.split(".")
    if SOURCES[module].name != "__init__.py":
        package.pop()
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _module_aliases(module: str, tree: ast.Module) -> dict[str, str]:
    """Local names bound to actloop modules: `import actloop.x as y`, `from actloop.x import _y`."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "actloop":
                    local = alias.asname or alias.name.split(".")[0]
                    aliases[local] = alias.name if alias.asname else "actloop"
        elif isinstance(node, ast.ImportFrom):
            target = _target(module, node)
            for alias in node.names:
                if f"{target}.{alias.name}" in SOURCES:
                    aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
    return aliases


def _dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """The actloop module an expression names (`_tc`, `actloop.runnables._base`), else None."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        parent = _dotted(node.value, aliases)
        if parent is not None and f"{parent}.{node.attr}" in SOURCES:
            return f"{parent}.{node.attr}"
    return None


def private_names_taken(module: str, tree: ast.Module) -> list[str]:
    """`module: other.module._name` for every underscore name `module` takes from another module,
    by import (`from x import _name`) or by attribute (`x._name`, `x` an imported module)."""
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            target = _target(module, node)
            if target.split(".")[0] != "actloop":
                continue
            for alias in node.names:
                name = f"{target}.{alias.name}"
                if _private(alias.name) and name not in SOURCES and target != module:
                    found.append(f"{module}: {name}")
    aliases = _module_aliases(module, tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            owner = _dotted(node.value, aliases)
            name = f"{owner}.{node.attr}"
            if owner is not None and owner != module and name not in SOURCES:
                found.append(f"{module}: {name}")
    return sorted(found)


def test_no_module_takes_another_modules_underscore_names() -> None:
    """ARCHITECTURE.md: a private module may be imported by a higher one, a private name never
    leaves its module (within a package too). A name others need gets a public name in its home
    module's `__all__`."""
    taken: list[str] = []
    for module, path in SOURCES.items():
        taken += private_names_taken(module, ast.parse(path.read_text(), str(path)))
    assert taken == []


def test_the_private_name_check_sees_imports_and_attributes() -> None:
    """The check above finds each form it is meant to find (so its empty result means something)."""
    code = (
        "from actloop.runnables._base import Runnable, _helper\n"
        "from actloop.messages import _tool_calls as _tc\n"
        "from . import _openai\n"
        "import actloop.json_agent as ja\n"
        "import actloop.executor._loop\n"
        "from actloop import __version__\n"
        "_tc.parse\n"
        "_tc._normalize\n"
        "_openai._role\n"
        "ja._first_object\n"
        "actloop.executor._loop._rule\n"
        "self._private\n"
    )
    assert private_names_taken("actloop.messages._types", ast.parse(code)) == [
        "actloop.messages._types: actloop.executor._loop._rule",
        "actloop.messages._types: actloop.json_agent._first_object",
        "actloop.messages._types: actloop.messages._openai._role",
        "actloop.messages._types: actloop.messages._tool_calls._normalize",
        "actloop.messages._types: actloop.runnables._base._helper",
    ]


# llama-cpp-python's private members the local engine reaches: its context (the KV cache), its
# model (the vocabulary), a grammar's text and root, and the exit stack it swaps out so a decode
# stuck at interpreter exit is never freed under. They are llama-cpp-python's names, not actloop's.
THIRD_PARTY_PRIVATE = {
    "actloop.models._local_cache": {"_ctx"},
    "actloop.models._local_engine": {"_ctx", "_grammar", "_model", "_root", "_stack"},
}


def test_private_usage_is_suppressed_only_for_llama_cpp_internals() -> None:
    """A `reportPrivateUsage` suppression hides a private name leaving its module from pyright;
    the only ones kept are for llama-cpp-python's members (THIRD_PARTY_PRIVATE)."""
    refused: list[str] = []
    kept: dict[str, set[str]] = {}
    for module, path in SOURCES.items():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "reportPrivateUsage" not in line:
                continue
            names = set(re.findall(r"\.(_[A-Za-z]\w*)", line.partition("#")[0]))
            allowed = THIRD_PARTY_PRIVATE.get(module, set())
            if not names or not names <= allowed:
                refused.append(f"{module}:{number}: {line.strip()}")
            kept.setdefault(module, set()).update(names)
    assert refused == []
    assert kept == THIRD_PARTY_PRIVATE  # an entry no longer needed is taken off the list


IMPORTERS = ("import_module", "__import__")
"""Calls that import a module by name: `importlib.import_module(...)`, `__import__(...)`."""

# Where a module is imported by a computed name, and why that is no upward import the contracts
# miss. A literal `actloop...` name is never allowed: write an import statement.
BY_NAME = {
    "actloop": "legacy names loaded on first use (`_LAZY`); the package root is above every layer",
    "actloop.models": "its own provider modules, each loaded on first use (`_LAZY`)",
    "actloop.distributed.ray": "the `ray` SDK, and the user's executor factory (`module:attr`)",
    "actloop.server._app": "the user's executor of `actloop serve module:attr`",
}


def _by_name_imports(tree: ast.Module) -> list[tuple[int, str | None]]:
    """(line, the literal name or None) of every by-name import call."""
    calls: list[tuple[int, str | None]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if called not in IMPORTERS or not node.args:
            continue
        arg = node.args[0]
        literal = arg.value if isinstance(arg, ast.Constant) else None
        calls.append((node.lineno, literal if isinstance(literal, str) else None))
    return calls


def test_no_actloop_module_is_imported_by_name() -> None:
    """An `importlib.import_module("actloop...")` is invisible to import-linter, so a layer could
    be broken through it; the one upward import is a statement listed in `ignore_imports`."""
    literal: list[str] = []
    computed: set[str] = set()
    for module, path in SOURCES.items():
        for line, name in _by_name_imports(ast.parse(path.read_text(), str(path))):
            if name is None:
                computed.add(module)
            elif name.split(".")[0] == "actloop":
                literal.append(f"{module}:{line}: {name}")
    assert literal == []
    assert computed == set(BY_NAME)


def test_by_name_imports_are_seen() -> None:
    code = (
        "import importlib\n"
        "from importlib import import_module\n"
        "importlib.import_module('actloop.integrations.langchain')\n"
        "import_module(name)\n"
        "__import__('ray')\n"
        "importlib.reload(module)\n"
    )
    assert _by_name_imports(ast.parse(code)) == [
        (3, "actloop.integrations.langchain"),
        (4, None),
        (5, "ray"),
    ]


def test_the_upward_import_is_a_declared_statement() -> None:
    """`adopt` imports the LangChain integration with a statement, and the contracts ignore
    exactly that import (an unmatched entry would fail `lint-imports` too)."""
    tree = ast.parse(SOURCES["actloop.runnables._foreign"].read_text())
    imports = [
        (node.module, [alias.name for alias in node.names])
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    ]
    assert imports == [
        ("__future__", ["annotations"]),
        ("typing", ["Any"]),
        ("actloop.integrations.langchain", ["from_langchain"]),
    ]
    contracts = _contracts()
    upward = "actloop.runnables._foreign -> actloop.integrations.langchain"
    assert contracts["layers"]["ignore_imports"] == [upward]
    assert upward in contracts["acyclic"]["ignore_imports"]


ABOVE_EXECUTOR = ("cli", "server", "distributed", "integrations", "mcp", "classic", "tracing")


def executor_internals_used(module: str, tree: ast.Module) -> list[str]:
    """The executor's private modules `module` imports (type-only imports included)."""
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            targets = [_target(module, node)]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            continue
        found += [t for t in targets if t.startswith("actloop.executor._")]
    return found


def test_no_module_above_the_executor_reads_its_private_modules() -> None:
    """The CLI, the server, the runners and tracing use the executor's and the checkpoint's
    public names (`RunView`, `Resume`, `read_thread`, ...), never the engine's private modules."""
    taken = [
        f"{module}: {target}"
        for module, path in SOURCES.items()
        if module.split(".")[1:2] and module.split(".")[1] in ABOVE_EXECUTOR
        for target in executor_internals_used(module, ast.parse(path.read_text()))
    ]
    assert taken == []


def test_executor_internals_used_sees_plain_and_type_only_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import actloop.executor._loop\n"
        "from actloop.executor import AgentExecutor\n"
        "if TYPE_CHECKING:\n"
        "    from actloop.executor._run import AgentRun\n"
    )
    found = executor_internals_used("actloop.cli._main", ast.parse(source))
    assert found == ["actloop.executor._loop", "actloop.executor._run"]


def _contracts() -> dict[str, dict[str, object]]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        config = tomllib.load(f)
    return {c["id"]: c for c in config["tool"]["importlinter"]["contracts"]}


def _section(text: str, heading: str) -> str:
    """The body of the `## heading` section of a markdown text (up to the next `## `)."""
    for chunk in re.split(r"^## ", text, flags=re.MULTILINE):
        if chunk.startswith(f"{heading}\n"):
            return chunk
    raise AssertionError(f"no section '## {heading}'")


def documented_modules(text: str) -> dict[str, list[str]]:
    """The `## Every module` tables: package folder (`src/actloop/executor/`) -> file names."""
    tables: dict[str, list[str]] = {}
    folder: str | None = None
    for line in _section(text, "Every module").splitlines():
        heading = re.fullmatch(r"### `(src/actloop/(?:\w+/)*)`", line)
        row = re.match(r"\| `(\w+\.py)` \|", line)
        if heading:
            folder = heading[1]
            tables[folder] = []
        elif row and folder is not None:
            tables[folder].append(row[1])
    return tables


def test_architecture_names_every_module() -> None:
    """Each `.py` file under src/actloop has a row in its package's table (static files and
    `py.typed` are not modules); a row for a file that is gone is refused too."""
    tables = documented_modules(DOC.read_text())
    missing: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        folder = f"{path.parent.relative_to(ROOT).as_posix()}/"
        if folder not in tables:
            missing.append(f"a heading ### `{folder}` with a table, and its row | `{path.name}` |")
        elif path.name not in tables[folder]:
            missing.append(f"under ### `{folder}`: | `{path.name}` | <what it holds> |")
    stale = [
        f"{folder}{name}"
        for folder, names in tables.items()
        for name in names
        if not (ROOT / folder / name).is_file()
    ]
    assert missing == [], "docs/ARCHITECTURE.md, section 'Every module': add\n" + "\n".join(missing)
    assert stale == [], "docs/ARCHITECTURE.md lists modules that do not exist: " + ", ".join(stale)


def test_documented_modules_reads_the_tables() -> None:
    text = (
        "## Every module\nintro `x.py`\n\n### `src/actloop/`\n| module | what |\n|---|---|\n"
        "| `__init__.py` | root |\n| `agents.py` | data |\n\n### `src/actloop/tools/builtin/`\n"
        "| module | what |\n|---|---|\n| `_clock.py` | time |\n\n## Next\n| `other.py` | no |\n"
    )
    assert documented_modules(text) == {
        "src/actloop/": ["__init__.py", "agents.py"],
        "src/actloop/tools/builtin/": ["_clock.py"],
    }


def test_every_module_table_is_in_file_order() -> None:
    """Rows sorted by file name, as `ls` shows them, so a missing one is easy to spot."""
    for folder, names in documented_modules(DOC.read_text()).items():
        assert names == sorted(names), folder


def doc_layers(text: str) -> list[list[str]]:
    """The layer line of `## The layer rule` (its first code block), top first."""
    block = _section(text, "The layer rule").split("```\n", 2)[1]
    line = " ".join(block.split())
    return [[name.strip() for name in layer.split("|")] for layer in line.split(">")]


def test_the_documented_layers_are_the_contracts() -> None:
    """The drawn line and pyproject's `layers` list agree, `__main__` at the top of both."""
    contract = _contracts()["layers"]
    layers = contract["layers"]
    assert isinstance(layers, list)
    expected = [[name.strip() for name in str(layer).split("|")] for layer in layers]
    assert doc_layers(DOC.read_text()) == expected
    assert expected[0] == ["__main__"]


def test_doc_layers_reads_a_wrapped_line() -> None:
    text = "## The layer rule\nintro\n\n```\na > b | c\n  > d\n```\n\n## Next\n```\nx\n```\n"
    assert doc_layers(text) == [["a"], ["b", "c"], ["d"]]


def conftest_imports(source: str) -> list[int]:
    """The lines of every import of a conftest module (`from .conftest import x`, ...)."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        if any(name.split(".")[-1] == "conftest" for name in names):
            lines.append(node.lineno)
    return sorted(lines)


def test_no_test_module_imports_from_a_conftest() -> None:
    """Helpers live in `tests/support` (`from support.serve import Serve`); a conftest holds only
    fixtures and hooks, which pytest hands to tests by name."""
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{line}"
        for path in sorted(TESTS.rglob("*.py"))
        for line in conftest_imports(path.read_text())
    ]
    assert found == []


def test_conftest_imports_are_seen() -> None:
    source = (
        "from .conftest import Serve\n"
        "from conftest import finish\n"
        "from . import conftest\n"
        "import conftest\n"
        "import tests.executor.conftest as helpers\n"
        "from support.serve import Serve\n"
        "from .agents import conftest_like\n"
    )
    assert conftest_imports(source) == [1, 2, 3, 4, 5]


def _is_fixture(decorator: ast.expr) -> bool:
    """`@pytest.fixture` or `@pytest.fixture(...)`."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(target, ast.Attribute) and target.attr == "fixture"


def helpers_in_conftest(source: str) -> list[str]:
    """Classes and functions a conftest defines that are neither fixtures nor `pytest_*` hooks."""
    found: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef):
            found.append(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            hook = node.name.startswith("pytest_")
            if not hook and not any(map(_is_fixture, node.decorator_list)):
                found.append(node.name)
    return found


def test_conftests_hold_only_fixtures_and_hooks() -> None:
    found = {
        path.relative_to(ROOT).as_posix(): names
        for path in sorted(TESTS.rglob("conftest.py"))
        if (names := helpers_in_conftest(path.read_text()))
    }
    assert found == {}


def test_conftest_helpers_are_seen() -> None:
    source = (
        "import pytest\n"
        "class Stores: ...\n"
        "def free_port() -> int: ...\n"
        "@pytest.fixture\n"
        "def serve(): ...\n"
        "@pytest.fixture(scope='session')\n"
        "async def server(): ...\n"
        "def pytest_report_header(): ...\n"
        "LIMIT = 3\n"
    )
    assert helpers_in_conftest(source) == ["Stores", "free_port"]
