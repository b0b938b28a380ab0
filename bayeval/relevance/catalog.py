"""The models a user chooses from: the kinds of the registry and the shipped configurations, each with when to use it.

A shipped configuration (``models/<name>.toml``) says in one line when to use it (its ``when`` key); the commands
show those lines under ``--help`` (``bayeval estimate --help``), the default
(:data:`bayeval.defaults.DEFAULT_MODEL`) marked. The kinds come from the registry
(:data:`bayeval.relevance.estimate.MODEL_KINDS`) and the configurations from the ``models/`` directory
(:func:`bayeval.relevance.config.list_configs`), never from a hand-written list. Variants that only a study uses
live beside it (``studies/models/*.toml``) and load by path.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from bayeval.defaults import DEFAULT_MODEL
from bayeval.errors import FileFormatError
from bayeval.relevance.config import list_configs, models_dir, read_toml
from bayeval.relevance.estimate import MODEL_KINDS

__all__ = ["ShippedModel", "model_help", "models_listing", "shipped_models"]


@dataclass(frozen=True)
class ShippedModel:
    """One shipped configuration: its name, when to use it, and whether it is the default."""

    name: str
    when: str
    default: bool


def shipped_models() -> tuple[ShippedModel, ...]:
    """Every shipped configuration with its ``when`` line, in name order.

    Raises
    ------
    FileFormatError
        Naming the file, for a shipped configuration without a one-line ``when``.

    Examples
    --------
    >>> [m.name for m in shipped_models() if m.default] == [DEFAULT_MODEL]
    True
    """
    out = []
    for name in list_configs():
        path = models_dir() / f"{name}.toml"
        when = read_toml(path).get("when")
        if not isinstance(when, str) or not when.strip() or "\n" in when:
            raise FileFormatError(str(path), None, "a shipped configuration needs a one-line 'when' (when to use it)")
        out.append(ShippedModel(name, when.strip(), name == DEFAULT_MODEL))
    return tuple(out)


def models_listing(width: int = 79) -> str:
    """The shipped configurations as lines ``name  when to use it``, the default marked, for ``--help``.

    Examples
    --------
    >>> "(default)" in models_listing()
    True
    """
    models = shipped_models()
    pad = max((len(m.name) for m in models), default=0) + 2
    lines = ["shipped models (--model NAME), when to use each (a study's variant loads by its path):"]
    for m in models:
        text = m.when + (" (default)" if m.default else "")
        lines.append(textwrap.fill(text, width, initial_indent="  " + m.name.ljust(pad),
                                   subsequent_indent=" " * (pad + 2)))
    return "\n".join(lines)


def model_help() -> str:
    """``MODEL`` of the command-line help: every kind of the registry and every shipped configuration.

    Examples
    --------
    >>> "hierarchical" in model_help() and "hier-default" in model_help()
    True
    """
    return (f"a model kind ({', '.join(MODEL_KINDS)}), a shipped configuration ({', '.join(list_configs())}) "
            f"or a .toml path (default {DEFAULT_MODEL})")
