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
