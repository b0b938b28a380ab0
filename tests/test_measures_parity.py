"""Parity with trec_eval on real data.

* TREC-8 ad hoc: every per-topic and ``all`` value of the official trec_eval output for all 129 runs
  (``../shared/data/trec8/trec_eval/eval.<tag>.gz``). trec_eval prints 4 decimals, so agreement means
  |bayeval - official| <= 5e-5; and as the kernels add terms in trec_eval's order, bayeval's values
  printed with ``%.4f`` are the very strings trec_eval printed (values such as 0.00625 sit on a
  rounding boundary, where a different summation order would print 0.0062 instead of 0.0063).
* TREC 2003 Robust (graded qrels 0/1/2, no official output): nDCG against a slow, independent
  pure-Python implementation, and every measure against pytrec_eval (trec_eval's C code) when installed.
"""

from __future__ import annotations

import gzip
import math

import numpy as np
import pytest

from bayeval.data.rankdata import RankData
from bayeval.io import read_qrels, read_runs
from bayeval.measures import Measure, evaluate

pytestmark = pytest.mark.data

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default cutoffs
TREC_EVAL_MEASURES = ["map", "P_10", "ndcg_cut_10", "bpref", "Rprec", "recip_rank", "map_cut_100", "recall_10",
                      "ndcg", "infAP"] + [f"{m}_{k}" for m in ("P", "map_cut", "ndcg_cut", "recall") for k in CUTOFFS
                                          if f"{m}_{k}" not in ("P_10", "ndcg_cut_10", "map_cut_100", "recall_10")]
TOL = 5e-5 + 1e-12


def _read_official(path) -> tuple[str, dict[tuple[str, str], str]]:
    """``run tag -> {(measure, topic): value as printed}`` from one trec_eval output file."""
    tag, values = None, {}
    with gzip.open(path, "rt") as fh:
        for line in fh:
            measure, topic, value = line.split()
            if measure == "runid":
                tag = value
            elif measure in TREC_EVAL_MEASURES or measure in ("num_q", "num_rel", "num_ret", "num_rel_ret"):
                values[measure, topic] = value
    assert tag is not None, f"{path}: no runid line"
    return tag, values


@pytest.fixture(scope="module")
def trec8(shared_data):
    """RankData, evaluation and official values of all 129 TREC-8 runs (built once per module)."""
    d = shared_data / "trec8"
    data = RankData.build(read_runs(d / "runs"), read_qrels(d / "qrels.txt.gz"))
    ev = evaluate(data, [Measure.from_trec_eval(n) for n in TREC_EVAL_MEASURES])
    official = dict(_read_official(f) for f in sorted((d / "trec_eval").glob("eval.*.gz")))
    return data, ev, official


def _official_array(data, official, name: str) -> np.ndarray:
    """``(S, T + 1)`` official values (as printed) of one measure, last column ``all``; '' where absent."""
    out = np.full((len(data.systems), len(data.topics) + 1), "", dtype=object)
    cols = {t: i for i, t in enumerate(data.topics)} | {"all": len(data.topics)}
    for s, run in enumerate(data.systems):
        for (measure, topic), value in official[run].items():
            if measure == name:
                out[s, cols[topic]] = value
    return out


def test_every_run_and_topic_is_read(trec8):
    data, ev, official = trec8
    assert len(data.systems) == 129 and set(data.systems) == set(official)
    assert len(data.topics) == 50
    # trec_eval's all-row averages over the topics the run has results for (num_q), here all 50
    num_q = np.array([int(official[r]["num_q", "all"]) for r in data.systems])
    np.testing.assert_array_equal(num_q, ev.has_results.sum(axis=1))


def test_counts_match(trec8):
    """R per topic, documents retrieved and relevant retrieved agree exactly with trec_eval's counts."""
    data, _, official = trec8
    for tr in data:
        rel = tr.ranked_values(tr.relevant, fill=False)
        for s, run in enumerate(data.systems):
            o = official[run]
            assert int(o["num_rel", tr.topic]) == tr.num_rel
            assert int(o["num_ret", tr.topic]) == tr.lengths[s]
            assert int(o["num_rel_ret", tr.topic]) == rel[s].sum()


@pytest.mark.parametrize("name", TREC_EVAL_MEASURES)
def test_parity_per_topic_and_mean(trec8, name):
    data, ev, official = trec8
    m = ev.measures.index(Measure.from_trec_eval(name))
    printed = _official_array(data, official, name)
    assert (printed != "").all(), f"{name}: official output lacks values"  # 129 runs x (50 topics + all)
    theirs = printed.astype(np.float64)
    ours = np.concatenate([ev.values[m], ev.mean()[m][:, None]], axis=1)
    worst = np.abs(ours - theirs)
    s, t = np.unravel_index(np.argmax(worst), worst.shape)
    topic = "all" if t == len(data.topics) else data.topics[t]
    assert worst.max() <= TOL, (f"{name}: max deviation {worst.max():.2e} for run {data.systems[s]} topic {topic}: "
                                f"bayeval {ours[s, t]:.6f}, trec_eval {theirs[s, t]}")
    ours_printed = np.vectorize(lambda v: f"{v:.4f}", otypes=[object])(ours)
    differ = np.argwhere(ours_printed != printed)
    assert len(differ) == 0, (f"{name}: {len(differ)} values print differently, e.g. run "
                              f"{data.systems[differ[0][0]]}: bayeval {ours[tuple(differ[0])]!r}, "
                              f"trec_eval {printed[tuple(differ[0])]}")


def test_fast_reader_agrees_with_careful_parser(shared_data):
    """The Arrow fast path and the line-by-line parser give identical rankings (unsorted runs included)."""
    from bayeval.io import read_bytes
    from bayeval.io.runs import _parse_arrow, _parse_checked

    for f in sorted((shared_data / "trec8" / "runs").glob("input.*.gz"))[:12]:
        data = read_bytes(f)
        fast, careful = _parse_arrow(data, str(f), True), _parse_checked(data, str(f), strict=True)
        assert fast is not None
        assert fast.tag == careful.tag and list(fast.topics) == list(careful.topics)
        np.testing.assert_array_equal(fast.starts, careful.starts)
        assert fast.docnos.to_pylist() == careful.docnos.tolist()
        np.testing.assert_array_equal(fast.scores, careful.scores)
        assert not fast.mixed and careful.duplicates == 0


# ------------------------------------------------------------------------------ Robust 2003, graded
@pytest.fixture(scope="module")
def robust03(shared_data):
    d = shared_data / "robust03"
    if not d.is_dir():
        pytest.skip(f"Robust 2003 data not found at {d}")
    runs = read_runs(d / "runs")
    qrels = read_qrels(d / "qrels.txt.gz")
    return runs, qrels, RankData.build(runs, qrels)


def _reference_ndcg(ranking: list[str], qrels: dict[str, int], k: int | None) -> float:
    """Slow, independent nDCG(@k): gain = grade, discount log2(rank + 1), ideal from all judged grades."""
    top = ranking if k is None else ranking[:k]
    dcg = sum(max(qrels.get(d, 0), 0) / math.log2(r + 2) for r, d in enumerate(top))
    ideal = sorted((g for g in qrels.values() if g > 0), reverse=True)
    ideal = ideal if k is None else ideal[:k]
    idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def test_robust03_graded_ndcg_matches_reference(robust03):
    runs, qrels, data = robust03
    assert set(np.concatenate([qrels[t].grades for t in qrels.topics]).tolist()) == {0, 1, 2}
    cutoffs = (5, 10, 100, None)
    ev = evaluate(data, [Measure("nDCG", k) for k in cutoffs])
    worst = 0.0
    checked = 0
    for t, topic in enumerate(data.topics):
        q = dict(zip(qrels[topic].docnos, qrels[topic].grades.tolist(), strict=True))
        for s, run in enumerate(runs):
            if not ev.has_results[s, t]:
                continue
            ranking = run.ranking(topic).tolist()
            for i, k in enumerate(cutoffs):
                worst = max(worst, abs(ev.values[i, s, t] - _reference_ndcg(ranking, q, k)))
                checked += 1
    assert checked >= 17 * 90 * len(cutoffs)  # most runs have results for most of the 100 topics
    assert worst <= 1e-12


def test_robust03_every_measure_matches_pytrec_eval(robust03):
    """All runs, all topics, graded qrels, relevance levels 1 and 2, against trec_eval's own code.

    pytrec_eval-terrier (0.5.x) compares scores in single precision, as trec_eval did before 9.0.8:
    154 of these 1,700 rankings have scores that differ in double precision but tie in single, and it
    orders them differently (the official TREC-8 output agrees with double precision, see the parity
    tests above). So it is given each ranking with scores n, n - 1, …, 1: the same order for both,
    and this test checks the measures, not the sort.
    """
    pytrec_eval = pytest.importorskip("pytrec_eval")
    runs, qrels, _ = robust03
    names = ["map", "P_10", "ndcg_cut_10", "bpref", "Rprec", "recip_rank", "map_cut_100", "recall_10", "ndcg",
             "infAP", "P_1000", "ndcg_cut_1000"]
    query = {"map", "bpref", "Rprec", "recip_rank", "ndcg", "infAP", "P.10,1000", "ndcg_cut.10,1000",
             "map_cut.100", "recall.10"}
    q = {t: dict(zip(qrels[t].docnos.tolist(), qrels[t].grades.tolist(), strict=True)) for t in qrels.topics}
    for level in (1, 2):
        data = RankData.build(runs, qrels.with_relevance_level(level))
        ev = evaluate(data, [Measure.from_trec_eval(n) for n in names])
        evaluator = pytrec_eval.RelevanceEvaluator(q, query, relevance_level=level)
        for s, run in enumerate(runs):
            scores = {t: {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
                      for t in run.topics for ranked in [run.ranking(t).tolist()]}
            official = evaluator.evaluate(scores)
            for t, topic in enumerate(data.topics):
                if topic not in official:
                    assert not ev.has_results[s, t]
                    continue
                got = ev.values[:, s, t]
                want = np.array([official[topic][n] for n in names])
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=f"{run.name} {topic} -l{level}")
