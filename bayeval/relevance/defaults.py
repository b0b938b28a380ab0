"""The one default relevance model of every door (CLI and Python API), and the help text listing the models.

The default is what two studies chose, one for each way the judgments fall short: the hierarchical model
``hier-reuse-depth`` — ``hier-default`` with the reuse prior on runs that did not contribute to the judgments
(:mod:`bayeval.relevance.reuse_prior`, which a top-up of their documents updates; docs/notes/calibration-record.md,
"Where things stand") and p beyond the judged depth corrected and widened by its held-out band
(:mod:`bayeval.relevance.beyond_depth`; docs/depth.md) — with the unseen relevant documents
(:func:`bayeval.relevance.unseen.with_unseen`) added to R_t wherever a measure divides by it. The list of
model kinds comes from the registry (:data:`bayeval.relevance.estimate.MODEL_KINDS`) and the shipped
configurations (:func:`bayeval.relevance.config.list_configs`), never from a hand-written string.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MODEL", "DEFAULT_UNSEEN", "model_help"]

#: The model every door fits when none is named (chosen on Robust 2003, DL 2020 and synthetic collections,
#: checked on TREC-8: docs/depth.md, docs/calibration.md).
DEFAULT_MODEL = "hier-reuse-depth"
#: Whether Chao's unseen relevant documents enter R_t by default (the studies' ``hier+unseen``).
DEFAULT_UNSEEN = True


def model_help() -> str:
    """``MODEL`` of the command-line help: every kind of the registry and every shipped configuration.

    Examples
    --------
    >>> "hierarchical" in model_help() and "hier-default" in model_help()
    True
    """
    from bayeval.relevance.config import list_configs
    from bayeval.relevance.estimate import MODEL_KINDS

    return (f"a model kind ({', '.join(MODEL_KINDS)}), a shipped configuration ({', '.join(list_configs())}) "
            f"or a .toml path (default {DEFAULT_MODEL})")
