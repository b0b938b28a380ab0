"""A synthetic test collection generator: systems of known quality, shallow judgments.

Used by ``bayeval demo``, the tests and the examples; needs no files and no network.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.qrels import Qrels, pool_qrels
from bayeval.data.run import Run, RunSet
from bayeval.errors import BayevalInputError

__all__ = ["SyntheticCollection", "make_collection"]


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
    """

    runs: RunSet
    qrels: Qrels
    judgments: Qrels
    quality: dict
    depth: int
    judged_depth: int
    seed: int | None
    independent: tuple = ()

    def __repr__(self) -> str:
        return (f"SyntheticCollection(systems={len(self.runs)}, topics={len(self.qrels)}, "
                f"depth={self.depth}, judged_depth={self.judged_depth}, seed={self.seed})")


def make_collection(n_topics: int = 20, n_systems: int = 8, n_docs: int = 300, depth: int = 100,
                    judged_depth: int = 10, base_rate: float = 0.08, graded: bool = False,
                    seed: int | np.random.SeedSequence | None = 0, independent: int = 0) -> SyntheticCollection:
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

    Notes
    -----
    System :math:`s` has quality :math:`q_s`, evenly spaced in [0.3, 2.0] and shuffled. It scores
    document :math:`i` of a topic as :math:`q_s y_i + \epsilon_{si} + \eta_i`, where :math:`y_i` is
    the true relevance, :math:`\eta_i \sim N(0, 0.5^2)` a document effect shared by all systems
    (so systems agree with each other, as real runs do) and :math:`\epsilon_{si} \sim N(0, 1)`.

    Examples
    --------
    >>> col = make_collection(n_topics=2, n_systems=3, n_docs=40, depth=10, judged_depth=5, seed=7)
    >>> len(col.runs), col.runs[0].ranking("1").shape
    (3, (10,))
    """
    for name, v in (("n_topics", n_topics), ("n_systems", n_systems), ("n_docs", n_docs),
                    ("depth", depth), ("judged_depth", judged_depth)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise BayevalInputError(f"{name}: must be a positive integer, got {v!r}")
    if not isinstance(independent, (int, np.integer)) or not 0 <= independent <= n_systems:
        raise BayevalInputError(f"independent: must be an integer in 0..n_systems ({n_systems}), got {independent!r}")
    if depth > n_docs:
        raise BayevalInputError(f"depth: must be <= n_docs ({n_docs}), got {depth}")
    if not 0.0 < base_rate < 1.0:
        raise BayevalInputError(f"base_rate: must lie in (0, 1), got {base_rate!r}")
    rng = np.random.default_rng(seed)
    quality = np.linspace(0.3, 2.0, n_systems)
    rng.shuffle(quality)
    own = np.zeros(n_systems, bool)
    if independent:
        own[rng.choice(n_systems, size=independent, replace=False)] = True
    names = [f"sys{s + 1:02d}" for s in range(n_systems)]
    width = len(str(n_docs - 1))
    rows_t, rows_d, rows_g = [], [], []
    run_parts: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in range(n_systems)]
    b = 2.0 * (1.0 - base_rate) / base_rate
    for t in range(1, n_topics + 1):
        topic = str(t)
        rate = rng.beta(2.0, b)
        rel = rng.random(n_docs) < rate
        if not rel.any():
            rel[rng.integers(n_docs)] = True
        grade = rel.astype(np.int64)
        if graded:
            grade[rel & (rng.random(n_docs) < 1 / 3)] = 2
        docnos = np.array([f"T{t}-D{i:0{width}d}" for i in range(n_docs)], dtype=object)
        rows_t.append(np.full(n_docs, topic, dtype=object))
        rows_d.append(docnos)
        rows_g.append(grade)
        doc_effect = rng.normal(0.0, 0.5, n_docs)
        for s in range(n_systems):
            shared = rng.normal(0.0, 0.5, n_docs) if own[s] else doc_effect
            score = quality[s] * grade.clip(0, 1) + shared + rng.normal(0.0, 1.0, n_docs)
            top = np.argsort(-score, kind="stable")[:depth]
            run_parts[s].append((np.full(depth, topic, dtype=object), docnos[top], np.round(score[top], 6)))
    runs = RunSet(tuple(
        Run.from_arrays(names[s], np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                        np.concatenate([p[2] for p in parts]))
        for s, parts in enumerate(run_parts)))
    qrels = Qrels.from_frame(pd.DataFrame({"topic": np.concatenate(rows_t), "docno": np.concatenate(rows_d),
                                           "grade": np.concatenate(rows_g)}))
    judged = pool_qrels(runs, qrels, judged_depth)
    seed_out = int(seed) if isinstance(seed, (int, np.integer)) else None
    return SyntheticCollection(runs, qrels, judged, dict(zip(names, quality.tolist(), strict=True)),
                               depth, judged_depth, seed_out, tuple(n for n, o in zip(names, own, strict=True) if o))
