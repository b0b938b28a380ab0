"""Inferred measures from a stratified sample of the pool: xinfAP, infNDCG, iP@k (:func:`inferred_measures`).

Yilmaz, Kanoulas & Aslam (SIGIR 2008), "A simple and efficient sampling method for estimating AP and NDCG",
as NIST's ``sample_eval.pl`` computes them (formulas: docs/sampling.md). Documents of a run are ranked as by
trec_eval (score descending, ties by docno descending) and cut at ``depth`` (1,000).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.data.sample import StratifiedSample, TopicSample
from bayeval.errors import BayevalInputError
from bayeval.sampling._inferred_kernels import RECALL_LEVELS, ideal_dcg, interpolated_precision, topic_inferred

__all__ = ["InferredEvaluation", "inferred_measures", "stratum_estimates"]

CUTOFFS = (10, 50, 1000)


@dataclass(frozen=True)
class InferredEvaluation:
    """What ``sample_eval.pl`` prints, for every run.

    Attributes
    ----------
    systems, topics : tuple of str
        Runs and the topics of the sample that some run has results for.
    per_topic : dict of str to ndarray, shape (S, T)
        ``infAP``, ``infNDCG``, ``iP10``, ``iP50``, ``iP1000``, ``inum_rel_ret``, ``inum_rel``, ``num_ret``;
        NaN where the run has no result for the topic.
    summary : dict of str to ndarray, shape (S,)
        The ``all`` rows: means over the topics a run has results for (infAP, infNDCG, iP@k, and
        ``iprec@rec0.00`` … ``iprec@rec1.00``), sums for ``inum_rel_ret`` and ``num_ret`` (documents ranked,
        at most ``depth`` a topic) and, for ``inum_rel``, over every topic of the sample.
    """

    systems: tuple[str, ...]
    topics: tuple[str, ...]
    per_topic: dict[str, np.ndarray]
    summary: dict[str, np.ndarray]

    def to_frame(self, per_topic: bool = True) -> pd.DataFrame:
        """Long frame ``run, topic, measure, value`` (``topic == "all"`` for the summary rows)."""
        rows = []
        for s, name in enumerate(self.systems):
            if per_topic:
                for t, topic in enumerate(self.topics):
                    for m, arr in self.per_topic.items():
                        if not np.isnan(arr[s, t]):
                            rows.append((name, topic, m, float(arr[s, t])))
            for m, arr in self.summary.items():
                rows.append((name, "all", m, float(arr[s])))
        return pd.DataFrame(rows, columns=["run", "topic", "measure", "value"])


def stratum_estimates(ts: TopicSample) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """``(order, N_c, n_c, s_c, R̂)`` of one topic, strata in the order of their labels as text.

    ``R̂ = Σ_c s_c N_c / n_c`` over strata with ``n_c > 0``; ``order[i]`` is the stratum index of the i-th label.
    """
    order = np.array(sorted(range(len(ts.labels)), key=lambda c: ts.labels[c]), dtype=np.int64)
    n_pool = ts.stratum_sizes[order]
    n_sampled = ts.stratum_sampled[order]
    n_rel = np.bincount(ts.strata[ts.grades > 0], minlength=len(ts.labels))[order]
    r_hat = 0.0
    for c in range(len(order)):
        if n_sampled[c] != 0:
            r_hat += n_rel[c] * n_pool[c] / n_sampled[c]
    return order, n_pool, n_sampled, n_rel, r_hat


def _grade_counts(ts: TopicSample, order: np.ndarray, n_pool: np.ndarray, n_sampled: np.ndarray) -> dict:
    rank_of = np.empty(len(order), dtype=np.int64)
    rank_of[order] = np.arange(len(order))
    counts: dict[int, float] = {}
    rel = ts.grades > 0
    for g in np.unique(ts.grades[rel]):
        per = np.bincount(rank_of[ts.strata[ts.grades == g]], minlength=len(order))
        for c in range(len(order)):
            if per[c]:
                counts[int(g)] = counts.get(int(g), 0.0) + per[c] * n_pool[c] / n_sampled[c]
    return counts


def inferred_measures(runs: RunSet | Sequence[Run], sample: StratifiedSample, *,
                      depth: int = 1000) -> InferredEvaluation:
    """xinfAP, infNDCG, iP@10/50/1000 and interpolated precision of every run from a stratified sample.

    Parameters
    ----------
    runs : RunSet or sequence of Run
    sample : StratifiedSample
        Every pooled document with its stratum, judged where sampled (:func:`bayeval.io.read_stratified_sample`).
    depth : int, default 1000
        Documents of a run beyond this rank are ignored (``sample_eval.pl``'s ``maxResultSize``).

    Returns
    -------
    InferredEvaluation

    Notes
    -----
    Per stratum ``c`` with ``N_c`` pooled, ``n_c`` sampled and ``s_c`` sampled relevant documents,
    ``R̂ = Σ_c s_c N_c / n_c``. At a sampled relevant document at rank ``k`` the precision above it is
    estimated as ``1/k + (1/k) Σ_c d_c(k) (s_c(k) + 1e-5)/(n_c(k) + 3e-5)`` (counts of pooled, sampled and
    sampled relevant documents of ``c`` above ``k``), and xinfAP ``= Σ_c (R̂_c/R̂) · mean over the sampled
    relevant documents of c of that precision`` — Yilmaz, Kanoulas & Aslam (SIGIR 2008); docs/sampling.md.
    """
    runs = runs if isinstance(runs, RunSet) else RunSet(tuple(runs))
    if not isinstance(depth, (int, np.integer)) or depth < 1:
        raise BayevalInputError(f"depth: must be a positive integer, got {depth!r}")
    data = RankData.build(runs, sample.pool(), depth=int(depth))
    S, T = len(runs), len(data.topics)
    names = ["infAP", "infNDCG", *[f"iP{k}" for k in CUTOFFS], "inum_rel_ret", "inum_rel", "num_ret"]
    per = {m: np.full((S, T), np.nan) for m in names}
    iprec = np.zeros((S, T, len(RECALL_LEVELS)))
    ranked_len = np.zeros((S, T))
    has = np.zeros((S, T), dtype=bool)
    full_len = np.array([[_topic_length(run, t) for t in data.topics] for run in runs], dtype=np.float64)
    for ti, tr in enumerate(data):
        ts = sample[tr.topic]
        order, n_pool, n_sampled, n_rel, r_hat = stratum_estimates(ts)
        rank_of = np.empty(len(order), dtype=np.int64)
        rank_of[order] = np.arange(len(order))
        pos = pd.Index(ts.docnos).get_indexer(tr.docnos)
        doc_code = np.where(pos >= 0, rank_of[ts.strata[np.maximum(pos, 0)]], -1)
        doc_grade = np.where(pos >= 0, ts.grades[np.maximum(pos, 0)], -1)
        code = tr.ranked_values(doc_code, fill=-1)
        grade = tr.ranked_values(doc_grade, fill=-1)
        lengths = tr.lengths.astype(np.int64)
        idcg = ideal_dcg(_grade_counts(ts, order, n_pool, n_sampled), int(depth))
        res = topic_inferred(code, grade, lengths, n_pool, n_sampled, n_rel, idcg, CUTOFFS)
        ok = tr.has_results
        has[:, ti] = ok
        for m in ("infAP", "infNDCG", *[f"iP{k}" for k in CUTOFFS], "inum_rel_ret"):
            per[m][ok, ti] = res[m][ok]
        per["inum_rel"][ok, ti] = r_hat
        per["num_ret"][ok, ti] = full_len[ok, ti]
        ranked_len[:, ti] = lengths
        iprec[:, ti] = interpolated_precision(res["R_k"], lengths, r_hat)
    n_topics = has.sum(axis=1)
    denom = np.maximum(n_topics, 1)
    summary = {}
    for m in ("infAP", "infNDCG"):
        summary[m] = _ordered_sum(per[m], has) / denom
    for i, level in enumerate(RECALL_LEVELS):
        summary[f"iprec@rec{level:4.2f}"] = _ordered_sum(iprec[:, :, i], has) / denom
    for k in CUTOFFS:
        summary[f"iP{k}"] = _ordered_sum(per[f"iP{k}"], has) / denom
    summary["inum_rel_ret"] = _ordered_sum(per["inum_rel_ret"], has)
    summary["inum_rel"] = np.full(S, sum(stratum_estimates(sample[t])[4] for t in sample.topics))
    summary["num_ret"] = _ordered_sum(ranked_len, has)
    return InferredEvaluation(tuple(runs.names), tuple(data.topics), per, summary)


def _topic_length(run: Run, topic: str) -> int:
    return len(run.topic_scores(topic))


def _ordered_sum(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Row sums over topics in order, added one after the other (as the Perl code adds them)."""
    acc = np.zeros(values.shape[0])
    for t in range(values.shape[1]):
        acc = acc + np.where(mask[:, t], values[:, t], 0.0)
    return acc
