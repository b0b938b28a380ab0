"""The importance-sampling correction of the hierarchical model's Laplace evidence (bayeval.relevance.evidence).

Checks: the correction is a converged Monte Carlo estimate (two seeds agree within its error, the importance
weights are well spread), small for Normal run effects (where Laplace is good), and larger for Student-t
run effects, against which the Laplace value is biased (docs/notes/calibration-record.md, "Heavy tails"). Dropping the
proposal density from the weights, or the run effects' prior, makes the estimate tens of nats off.
"""

from __future__ import annotations

import pytest
from conftest import study_model

from bayeval.data import RankData
from bayeval.relevance import HierarchicalEstimator
from bayeval.relevance.evidence import evidence_correction
from bayeval.synthetic import make_collection


@pytest.fixture(scope="module")
def corrections():
    col = make_collection(n_topics=3, n_systems=2, n_docs=60, depth=20, judged_depth=4, seed=2)
    data = RankData.build(col.runs, col.judgments, depth=20)
    out = {}
    for name, config in (("hier-default", "hier-default"), ("hier-t", study_model("hier-t"))):
        m, _, _ = HierarchicalEstimator(config).model(data)
        h = m.fit("map").mode.x[m.n_latent:]
        out[name] = [evidence_correction(m, h, n=800, seed=s) for s in (0, 1)]
    return out


def test_the_correction_is_a_converged_estimate(corrections):
    for (c0, ess0), (c1, ess1) in corrections.values():
        assert abs(c0 - c1) < 0.02
        assert min(ess0, ess1) > 400  # of 800 draws


def test_laplace_is_biased_against_the_t(corrections):
    normal = corrections["hier-default"][0][0]
    t = corrections["hier-t"][0][0]
    assert abs(normal) < 0.1
    assert t - normal > 0.05
