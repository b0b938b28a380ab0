"""The packages keep their own doors: no cross-package use of an underscore name (docs/architecture.md).

A module of ``bayeval/<package>/`` (or of ``benchmarks/``, ``studies/``) may use another package only through its
public names: no ``from bayeval.expected._engine import ...``, no ``from bayeval.x import _name`` and no
``module._name`` on a module of another package. Inside its own package a module may use any name.
The walk reads every import with :mod:`ast` (function-local ones too).
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _package(module: str) -> str:
    """``bayeval.expected._api`` → ``bayeval.expected``; a top-level module is its own package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "bayeval" else parts[0]


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def crossings(path: Path, module: str) -> list[str]:
    """The cross-package underscore uses in one file, as ``file:line: what``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _package(module)
    out, modules = [], {}  # local name -> module it is bound to

    def check(target: str, names: list[str], node) -> None:
        if _package(target) == own or not target.startswith("bayeval"):
            return
        hidden = [p for p in target.split(".") if _private(p)] + [n for n in names if _private(n)]
        if hidden:
            out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {target} {', '.join(names)}".rstrip())

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [a.name for a in node.names]
            check(node.module, names, node)
            for a in node.names:
                if _is_module(f"{node.module}.{a.name}"):
                    modules[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                check(a.name, [], node)
                if a.asname:
                    modules[a.asname] = a.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr):
            target = modules.get(node.value.id)
            if target is not None:
                check(target, [node.attr], node)
    return out


def _files():
    for top in ("bayeval", "benchmarks", "studies"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield path, ".".join(parts)


def test_no_cross_package_import_of_an_underscore_name():
    found = [line for path, module in _files() for line in crossings(path, module)]
    assert not found, "cross-package use of underscore names:\n" + "\n".join(found)


@pytest.mark.parametrize("source, expect", [
    ("from bayeval.expected._engine import x", True),
    ("from bayeval.expected import _probabilities", True),
    ("from bayeval.experiments import robustness\nrobustness._check_int(1)", True),
    ("import bayeval.relevance._kernels as k", True),
    ("from bayeval.expected import compare_systems", False),
    ("from bayeval.selection._private import x", False),  # its own package
    ("from bayeval.measures.measure import __all__", False),
])
def test_the_walk_finds_each_kind_of_crossing(tmp_path, monkeypatch, source, expect):
    """The check itself: each form of crossing is caught, public and own-package uses are not."""
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    f = tmp_path / "m.py"
    f.write_text(source, encoding="utf-8")
    assert bool(crossings(f, "bayeval.selection.m")) is expect


def test_each_vocabulary_is_registered_once():
    """Every name of a method vocabulary has exactly one entry in its registry (no string tests elsewhere)."""
    from bayeval.methods import CLOSED_FORM_METHODS, CONFIDENCES, MOMENT_METHODS, SELECTION_METHODS
    from bayeval.relevance import list_configs, load_config
    from bayeval.relevance.estimate import ESTIMATORS
    from bayeval.selection.methods import ESTIMATING_METHODS, SELECTORS

    assert sorted(SELECTORS) == sorted(SELECTION_METHODS + ESTIMATING_METHODS)
    assert sorted(CONFIDENCES) == sorted(MOMENT_METHODS) == sorted((*CLOSED_FORM_METHODS, "mc"))
    kinds = {load_config(name).kind for name in list_configs()}
    assert kinds == set(ESTIMATORS)
    for name in list_configs():
        cfg = load_config(name)
        assert cfg.accepts <= {"depth", "extra", "stage_methods", "texts", "embeddings", "similarity", "matrix",
                               "topup", "labels"}
        assert "labels" in cfg.accepts  # an automatic assessor is an expert of every model


# --- the house rules (docs/architecture.md): no circles, imports at the top, models a user chooses from ---------

#: Packages a module outside ``cli/`` may import inside a function: heavy and optional, seconds to import
#: (``import bayeval.relevance`` must not load PyMC; docs/architecture.md, "Imports inside functions").
HEAVY_PACKAGES = frozenset({"pymc", "arviz", "pytensor", "matplotlib", "dask", "distributed", "starlette", "sklearn"})


def _modules(root: Path) -> dict[str, Path]:
    """``{dotted name: file}`` of every module under ``root/bayeval`` (a package as its ``__init__.py``)."""
    out = {}
    for path in sorted((root / "bayeval").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    """Who imports whom among the modules of ``root/bayeval``: every import statement, at the top of a module or
    inside a function; ``from package import module`` is an arrow to that module, ``from module import name`` to the
    module."""
    modules = _modules(root)
    graph = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    targets.add(sub if sub in modules else node.module)
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def local_imports(path: Path, root: Path) -> list[str]:
    """The imports inside functions of one file that are not of a heavy optional package, as ``file:line: module``."""
    out = []
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            out += [f"{path.relative_to(root)}:{node.lineno}: {n}" for n in names
                    if n.split(".")[0] not in HEAVY_PACKAGES]
    return sorted(set(out))


def _library_files(root: Path):
    """Every module of ``bayeval/`` outside the command modules of ``cli/``."""
    for path in sorted((root / "bayeval").rglob("*.py")):
        if path.relative_to(root / "bayeval").parts[0] != "cli":
            yield path


def test_no_circles_among_the_modules():
    found = circles(import_graph(ROOT))
    assert not found, "modules that import each other in a loop:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_imports_inside_functions_only_of_heavy_optional_packages():
    found = [line for path in _library_files(ROOT) for line in local_imports(path, ROOT)]
    assert not found, ("imports inside functions outside cli/ (move them to the top; only "
                       f"{', '.join(sorted(HEAVY_PACKAGES))} may wait):\n" + "\n".join(found))


def test_the_shipped_models_are_few_and_each_says_when_to_use_it():
    from bayeval.defaults import DEFAULT_MODEL
    from bayeval.relevance.catalog import shipped_models
    from bayeval.relevance.config import list_configs

    models = shipped_models()
    assert [m.name for m in models] == list(list_configs())
    assert 1 <= len(models) <= 10, [m.name for m in models]
    assert all(m.when and "\n" not in m.when for m in models)
    assert [m.name for m in models if m.default] == [DEFAULT_MODEL]


def _write_package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "bayeval" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("files, expect", [
    ({"a.py": "from bayeval import b\n", "b.py": "def f():\n    from bayeval.a import x\n"},
     [["bayeval.a", "bayeval.b"]]),
    ({"a.py": "import bayeval.b\n", "b.py": "from bayeval.c import y\n", "c.py": "from bayeval.a import z\n"},
     [["bayeval.a", "bayeval.b", "bayeval.c"]]),
    ({"a.py": "from bayeval.b import x\n", "b.py": "import numpy\n"}, []),
])
def test_the_graph_finds_a_circle_through_a_function_local_import(tmp_path, files, expect):
    """The check itself: a loop closed inside a function is a circle too; a chain is not."""
    assert circles(import_graph(_write_package(tmp_path, files))) == expect


@pytest.mark.parametrize("source, expect", [
    ("def f():\n    import pymc\n    from matplotlib import pyplot\n", []),
    ("def f():\n    from scipy.stats import norm\n", ["bayeval/m.py:2: scipy.stats"]),
    ("class C:\n    def f(self):\n        import bayeval.io\n", ["bayeval/m.py:3: bayeval.io"]),
    ("import pandas\n", []),
])
def test_the_walk_finds_each_local_import_that_could_be_at_the_top(tmp_path, source, expect):
    root = _write_package(tmp_path, {"m.py": source})
    assert local_imports(root / "bayeval" / "m.py", root) == expect
