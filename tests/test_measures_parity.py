"""Parity with the official trec_eval output for all 129 TREC-8 ad hoc runs.

trec_eval prints 4 decimals, so agreement means |bayeval - official| <= 5e-5 (plus float noise: values
such as 0.03125 print as 0.0312 under round-half-even).
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from bayeval.data.rankdata import RankData
from bayeval.io import read_qrels, read_runs
from bayeval.measures import Measure, evaluate

pytestmark = pytest.mark.data

TREC_EVAL_MEASURES = ["map", "P_10", "ndcg_cut_10", "bpref", "infAP", "Rprec", "recip_rank", "map_cut_100",
                      "recall_10", "ndcg"]
TOL = 5e-5 + 1e-12


@pytest.fixture(scope="module")
def trec8(shared_data):
    d = shared_data / "trec8"
    runs = read_runs(d / "runs")
    data = RankData.build(runs, read_qrels(d / "qrels.txt.gz"))
    ev = evaluate(data, [Measure.from_trec_eval(n) for n in TREC_EVAL_MEASURES])
    official = {}
    for f in sorted((d / "trec_eval").glob("eval.*.gz")):
        rows = [line.split() for line in gzip.open(f, "rt")]
        tag = next(r[2] for r in rows if r[0] == "runid")
        official[tag] = {(r[0], r[1]): float(r[2]) for r in rows if r[0] in TREC_EVAL_MEASURES}
    return data, ev, official


def test_every_run_is_read(trec8):
    data, _, official = trec8
    assert len(data.systems) == 129
    assert set(data.systems) == set(official)
    assert len(data.topics) == 50


@pytest.mark.parametrize("name", TREC_EVAL_MEASURES)
def test_parity_per_topic_and_mean(trec8, name):
    data, ev, official = trec8
    m = [str(x) for x in ev.measures].index(str(Measure.from_trec_eval(name)))
    means = ev.mean()
    worst = 0.0
    count = 0
    for s, run in enumerate(data.systems):
        for (meas, topic), value in official[run].items():
            if meas != name:
                continue
            ours = means[m, s] if topic == "all" else ev.values[m, s, data.topics.index(topic)]
            worst = max(worst, abs(ours - value))
            count += 1
    assert count == 129 * 51  # 50 topics + 'all' for every run
    assert worst <= TOL, f"{name}: max deviation {worst:.2e}"


def test_fast_reader_agrees_with_careful_parser(shared_data):
    """The Arrow fast path and the line-by-line parser give identical rankings (unsorted runs included)."""
    from bayeval.io._files import read_bytes
    from bayeval.io.runs import _parse_checked, _parse_fast

    for f in sorted((shared_data / "trec8" / "runs").glob("input.*.gz"))[:12]:
        data = read_bytes(f)
        fast, careful = _parse_fast(data), _parse_checked(data, str(f))
        assert fast is not None
        assert fast[0] == careful[0] and list(fast[1]) == list(careful[1])
        np.testing.assert_array_equal(fast[2], careful[2])
        assert fast[3].to_pylist() == careful[3].tolist()
        np.testing.assert_array_equal(fast[4], careful[4])
