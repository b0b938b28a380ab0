"""A synthetic test collection generator: systems of known quality, shallow judgments.

Used by ``bayeval demo``, the tests and the examples; needs no files and no network.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bayeval.data.qrels import Qrels, pool_qrels
from bayeval.data.run import Run, RunSet
from bayeval.errors import BayevalInputError

__all__ = ["DENSE_SHALLOW", "SyntheticCollection", "dense_collection", "make_collection"]


@dataclass(frozen=True, eq=False)
class SyntheticCollection:
    """A generated collection.

    Attributes
    ----------
    runs : RunSet
        One run per system, ``depth`` documents per topic.
    qrels : Qrels
        The complete truth: every document of every topic judged.
    judgments : Qrels
        What a depth-``judged_depth`` pool over all runs would have judged (the incomplete
        judgments a study starts from).
    quality : dict
        System name → its quality parameter (higher is better).
    depth, judged_depth : int
    seed : int or None
    independent : tuple of str
        The systems that do not share the document effect (``make_collection(independent=...)``).
    manual : tuple of str
        The manual-like systems (``make_collection(manual=...)``): a quality bonus and their own document
        effect.
    hidden : dict
        Topic → tuple of the docnos of its hidden relevant documents (``make_collection(hidden=...)``), whose
        shared document effect is lowered; empty when ``hidden`` is 0.
    """

    runs: RunSet
    qrels: Qrels
    judgments: Qrels
    quality: dict
    depth: int
    judged_depth: int
    seed: int | None
    independent: tuple = ()
    manual: tuple = ()
    hidden: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return (f"SyntheticCollection(systems={len(self.runs)}, topics={len(self.qrels)}, "
                f"depth={self.depth}, judged_depth={self.judged_depth}, seed={self.seed})")


def make_collection(n_topics: int = 20, n_systems: int = 8, n_docs: int = 300, depth: int = 100,
                    judged_depth: int = 10, base_rate: float = 0.08, graded: bool = False,
                    seed: int | np.random.SeedSequence | None = 0, independent: int = 0, manual: int = 0,
                    manual_quality: float = 0.5, hidden: float = 0.0,
                    hidden_effect: float = -2.0, hidden_reach: float = 1.0) -> SyntheticCollection:
    r"""Generate runs of systems of different quality over random topics.

    Parameters
    ----------
    n_topics, n_systems, n_docs : int
        Collection size; each topic has ``n_docs`` candidate documents.
    depth : int
        Documents each system retrieves per topic (``<= n_docs``).
    judged_depth : int
        Depth of the pool whose documents are judged in ``judgments``.
    base_rate : float
        Mean fraction of relevant documents per topic (topic rates vary around it,
        Beta(2, 2(1 - b)/b) distributed, at least one relevant document per topic).
    graded : bool
        If true, relevant documents get grade 1 or 2 (a third of them 2).
    seed : int, SeedSequence or None
        Seed of the generator (``np.random.default_rng(seed)``).
    independent : int
        How many systems (drawn at random) do not share the document effect :math:`\eta_i`: each sees its
        own :math:`\eta_{si}\sim N(0, 0.5^2)`, so its ranking agrees less with the others' and the relevant
        documents it finds are often ones no other system retrieves — as TREC's manual runs do. With 0 (the
        default) the generator draws exactly what it drew before this option existed.
    manual : int
        How many *manual-like* systems (drawn at random among the systems that are not ``independent``):
        each has quality :math:`q_s + \Delta_q` (``manual_quality``) and, like an independent system, its
        own document effect, so it does not share the lowered effect of the hidden relevant documents and
        finds them where the others rank them low. ``independent + manual <= n_systems``. With 0 (the
        default) nothing is drawn for it.
    manual_quality : float
        :math:`\Delta_q \ge 0`, the quality bonus of a manual-like system (default 0.5).
    hidden : float
        :math:`h \in [0, 1)`, the probability that a relevant document is *hidden*: its shared document
        effect is moved by ``hidden_effect``, so that every system sharing the effect ranks it low. With 0
        (the default) nothing is drawn for it.
    hidden_effect : float
        :math:`\delta_h \le 0`, the shift of a hidden document's shared effect (default −2.0).
    hidden_reach : float
        :math:`\rho \in (0, 1]`, the probability that a manual-like system sees a given hidden document
        (default 1: each sees them all). Below 1 the manual-like systems find *different* hidden documents,
        so that each has relevant documents no other run retrieves, as each TREC manual run has.

    Returns
    -------
    SyntheticCollection

    Notes
    -----
    System :math:`s` has quality :math:`q_s`, evenly spaced in [0.3, 2.0] and shuffled. It scores
    document :math:`i` of a topic as :math:`q_s y_i + \epsilon_{si} + \eta_i`, where :math:`y_i` is
    the true relevance, :math:`\eta_i \sim N(0, 0.5^2)` a document effect shared by all systems
    (so systems agree with each other, as real runs do) and :math:`\epsilon_{si} \sim N(0, 1)`.

    Manual-like systems (``manual`` > 0, ``hidden`` > 0). TREC's manual runs are among the best and
    contribute many relevant documents no other run retrieves (Zobel, SIGIR 1998; Voorhees & Harman's TREC
    overviews). Here a relevant document is hidden with probability :math:`h`,
    :math:`z_i \sim \mathrm{Bernoulli}(h)` for :math:`y_i = 1` (:math:`z_i = 0` otherwise), and the
    shared effect becomes :math:`\eta_i + \delta_h z_i`. A system :math:`s \in M` (the manual-like ones)
    scores

    .. math:: (q_s + \Delta_q)\, y_i + \eta_{si} + \epsilon_{si}, \qquad \eta_{si} \sim N(0, 0.5^2),

    plus :math:`\delta_h z_i (1 - v_{si})` with :math:`v_{si} \sim \mathrm{Bernoulli}(\rho)` (the
    system sees hidden document :math:`i`; drawn only when :math:`\rho < 1`). A manual-like system thus
    sees the hidden relevant documents it reaches as any other relevant one, while a system sharing the
    effect scores them :math:`q_s + \eta_i + \delta_h + \epsilon_{si}` — with :math:`\delta_h = -2`
    about as a non-relevant document for all but the best systems, with :math:`\delta_h = -4` below
    almost every non-relevant one. The hidden relevant documents a depth-``depth`` pool of the
    shared-effect systems misses are then found by manual-like systems only, each finding its own
    share :math:`\rho` of them (or by no run at all: the complete truth still counts them). An
    ``independent`` system does not share the effect either, so it sees every hidden document as a manual-like
    system with :math:`\rho = 1` does, without the quality bonus.

    Examples
    --------
    >>> col = make_collection(n_topics=2, n_systems=3, n_docs=40, depth=10, judged_depth=5, seed=7)
    >>> len(col.runs), col.runs[0].ranking("1").shape
    (3, (10,))
    """
    _check_settings(n_topics, n_systems, n_docs, depth, judged_depth, base_rate, independent, manual,
                    manual_quality, hidden, hidden_effect, hidden_reach)
    rng = np.random.default_rng(seed)
    quality, own, man = _systems(rng, n_systems, independent, manual, manual_quality)
    names = [f"sys{s + 1:02d}" for s in range(n_systems)]
    rows_t, rows_d, rows_g, run_parts, hidden_docs = _draw_topics(
        rng, n_topics, n_docs, depth, base_rate, graded, hidden, hidden_effect, hidden_reach, quality, own, man)
    runs = _runs(names, run_parts)
    qrels = Qrels.from_frame(pd.DataFrame({"topic": np.concatenate(rows_t), "docno": np.concatenate(rows_d),
                                           "grade": np.concatenate(rows_g)}))
    judged = pool_qrels(runs, qrels, judged_depth)
    seed_out = int(seed) if isinstance(seed, (int, np.integer)) else None
    return SyntheticCollection(runs, qrels, judged, dict(zip(names, quality.tolist(), strict=True)),
                               depth, judged_depth, seed_out, tuple(n for n, o in zip(names, own, strict=True) if o),
                               tuple(n for n, m in zip(names, man, strict=True) if m), hidden_docs)


def _draw_topics(rng: np.random.Generator, n_topics: int, n_docs: int, depth: int, base_rate: float, graded: bool,
                 hidden: float, hidden_effect: float, hidden_reach: float, quality: np.ndarray, own: np.ndarray,
                 man: np.ndarray) -> tuple[list, list, list, list, dict[str, tuple]]:
    """Every topic's truth and each system's top ``depth`` documents with their scores, topic by topic from
    ``rng``: ``(topics, docnos, grades)`` of the qrels rows, each system's ``(topic, docno, score)`` parts and
    the hidden relevant documents of each topic (Notes of :func:`make_collection`)."""
    n_systems = len(quality)
    width = len(str(n_docs - 1))
    rows_t, rows_d, rows_g = [], [], []
    hidden_docs: dict[str, tuple] = {}
    run_parts: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in range(n_systems)]
    b = 2.0 * (1.0 - base_rate) / base_rate
    for t in range(1, n_topics + 1):
        topic = str(t)
        docnos, grade, doc_effect, hid = _topic_truth(rng, t, n_docs, width, b, graded, hidden)
        rows_t.append(np.full(n_docs, topic, dtype=object))
        rows_d.append(docnos)
        rows_g.append(grade)
        if hidden > 0.0:
            doc_effect = doc_effect + hidden_effect * hid
            hidden_docs[topic] = tuple(docnos[hid])
        for s in range(n_systems):
            shared = rng.normal(0.0, 0.5, n_docs) if own[s] or man[s] else doc_effect
            if man[s] and hidden > 0.0 and hidden_reach < 1.0:
                shared = shared + hidden_effect * (hid & (rng.random(n_docs) >= hidden_reach))
            score = quality[s] * grade.clip(0, 1) + shared + rng.normal(0.0, 1.0, n_docs)
            top = np.argsort(-score, kind="stable")[:depth]
            run_parts[s].append((np.full(depth, topic, dtype=object), docnos[top], np.round(score[top], 6)))
    return rows_t, rows_d, rows_g, run_parts, hidden_docs


def _runs(names: list[str], run_parts: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]]) -> RunSet:
    """Each system's ``(topic, docno, score)`` parts, topic after topic, as one run named ``names[s]``."""
    return RunSet(tuple(
        Run.from_arrays(names[s], np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                        np.concatenate([p[2] for p in parts]))
        for s, parts in enumerate(run_parts)))


def _check_settings(n_topics, n_systems, n_docs, depth, judged_depth, base_rate, independent, manual,
                    manual_quality, hidden, hidden_effect, hidden_reach) -> None:
    """Refuse, naming the argument, a setting :func:`make_collection` cannot generate."""
    for name, v in (("n_topics", n_topics), ("n_systems", n_systems), ("n_docs", n_docs),
                    ("depth", depth), ("judged_depth", judged_depth)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise BayevalInputError(f"{name}: must be a positive integer, got {v!r}")
    if not isinstance(independent, (int, np.integer)) or not 0 <= independent <= n_systems:
        raise BayevalInputError(f"independent: must be an integer in 0..n_systems ({n_systems}), got {independent!r}")
    if not isinstance(manual, (int, np.integer)) or not 0 <= manual <= n_systems - independent:
        raise BayevalInputError(f"manual: must be an integer in 0..n_systems - independent "
                                f"({n_systems - independent}), got {manual!r}")
    if not isinstance(manual_quality, (int, float, np.integer, np.floating)) or not 0.0 <= manual_quality < np.inf:
        raise BayevalInputError(f"manual_quality: must be a finite number >= 0, got {manual_quality!r}")
    if not isinstance(hidden, (int, float, np.integer, np.floating)) or not 0.0 <= hidden < 1.0:
        raise BayevalInputError(f"hidden: must lie in [0, 1), got {hidden!r}")
    if not isinstance(hidden_effect, (int, float, np.integer, np.floating)) or not -np.inf < hidden_effect <= 0.0:
        raise BayevalInputError(f"hidden_effect: must be a finite number <= 0, got {hidden_effect!r}")
    if not isinstance(hidden_reach, (int, float, np.integer, np.floating)) or not 0.0 < hidden_reach <= 1.0:
        raise BayevalInputError(f"hidden_reach: must lie in (0, 1], got {hidden_reach!r}")
    if depth > n_docs:
        raise BayevalInputError(f"depth: must be <= n_docs ({n_docs}), got {depth}")
    if not 0.0 < base_rate < 1.0:
        raise BayevalInputError(f"base_rate: must lie in (0, 1), got {base_rate!r}")


def _systems(rng: np.random.Generator, n_systems: int, independent: int, manual: int, manual_quality: float
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(quality, own, manual)``: each system's :math:`q_s` (evenly spaced in [0.3, 2.0], shuffled, plus
    :math:`\\Delta_q` for a manual-like one) and which systems have their own document effect and which are
    manual-like (drawn from ``rng`` only when asked for)."""
    quality = np.linspace(0.3, 2.0, n_systems)
    rng.shuffle(quality)
    own = np.zeros(n_systems, bool)
    if independent:
        own[rng.choice(n_systems, size=independent, replace=False)] = True
    man = np.zeros(n_systems, bool)
    if manual:
        man[rng.choice(np.flatnonzero(~own), size=manual, replace=False)] = True
        quality = quality + manual_quality * man
    return quality, own, man


def _topic_truth(rng: np.random.Generator, t: int, n_docs: int, width: int, b: float, graded: bool,
                 hidden: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Topic ``t``'s documents, their true grades (rate ~ Beta(2, b), at least one relevant document), the
    shared document effect :math:`\\eta_i` and, with ``hidden > 0``, which relevant documents are hidden
    (:math:`z_i`; ``None`` otherwise), drawn from ``rng`` in that order."""
    rate = rng.beta(2.0, b)
    rel = rng.random(n_docs) < rate
    if not rel.any():
        rel[rng.integers(n_docs)] = True
    grade = rel.astype(np.int64)
    if graded:
        grade[rel & (rng.random(n_docs) < 1 / 3)] = 2
    docnos = np.array([f"T{t}-D{i:0{width}d}" for i in range(n_docs)], dtype=object)
    doc_effect = rng.normal(0.0, 0.5, n_docs)
    hid = rel & (rng.random(n_docs) < hidden) if hidden > 0.0 else None
    return docnos, grade, doc_effect, hid


#: The small, dense pools of modern passage collections (TREC DL: ~140-210 judged documents a topic, a third to
#: a half of them relevant at grade >= 1): 200 candidate documents a topic, every one of them in the depth-100
#: pool of 30 systems, 40% relevant on average (topic rates Beta(2, 3): from under 10% to over 70%), graded 1-2.
#: The choosing collection of docs/sampling.md for samples of 10-40 judgments a topic.
DENSE_SHALLOW = {"n_topics": 50, "n_systems": 30, "n_docs": 200, "depth": 100, "judged_depth": 100,
                 "base_rate": 0.4, "graded": True}


def dense_collection(seed: int | np.random.SeedSequence | None = 0, **overrides) -> SyntheticCollection:
    """A collection with small, dense pools (:data:`DENSE_SHALLOW`), any of its settings overridden.

    Examples
    --------
    >>> col = dense_collection(seed=1, n_topics=2, n_systems=4)
    >>> len(col.runs), col.depth, len(col.qrels["1"].docnos)
    (4, 100, 200)
    """
    return make_collection(**{**DENSE_SHALLOW, **overrides, "seed": seed})
