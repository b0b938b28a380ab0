"""Manual-like systems and hidden relevant documents in the synthetic generator (bayeval.synthetic)."""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from bayeval.errors import BayevalInputError
from bayeval.synthetic import make_collection

# Each run's top 50 over 400 candidates; 16 systems, 4 of them manual-like; 40% of relevant documents hidden
# below almost every non-relevant one for the shared-effect systems; each manual-like system sees 30% of them.
MANUAL = dict(n_topics=20, n_systems=16, n_docs=400, depth=50, base_rate=0.08, seed=5, manual=4, hidden=0.4,
              hidden_effect=-4.0, hidden_reach=0.3)


def _fingerprint(col) -> str:
    """SHA-256 (16 hex digits) of every ranking, score, judgment and quality of a collection."""
    h = hashlib.sha256()
    for run in col.runs:
        h.update(run.name.encode())
        for t in run.topics:
            h.update("\t".join(run.ranking(t).tolist()).encode())
            h.update(np.asarray(run.topic_scores(t), np.float64).tobytes())
    for q in (col.qrels, col.judgments):
        for t in q.topics:
            tj = q.topic_judgments[t]
            h.update("\t".join(tj.docnos.tolist()).encode())
            h.update(tj.grades.astype(np.int64).tobytes())
    h.update(np.array([col.quality[n] for n in sorted(col.quality)], np.float64).tobytes())
    return h.hexdigest()[:16]


def _retrieval(col):
    """Per topic: the relevant docnos and a Counter of how many runs retrieve each document."""
    out = {}
    for t in col.qrels.topics:
        tj = col.qrels.topic_judgments[t]
        counts = Counter()
        for run in col.runs:
            counts.update(run.ranking(t).tolist())
        out[t] = (set(tj.docnos[tj.grades >= 1].tolist()), counts)
    return out


def _unique_share(col) -> dict[str, float]:
    """Per run: the share of its relevant retrieved documents that no other run retrieves."""
    by_topic = _retrieval(col)
    share = {}
    for run in col.runs:
        rel = uniq = 0
        for t, (relevant, counts) in by_topic.items():
            hits = [d for d in run.ranking(t).tolist() if d in relevant]
            rel += len(hits)
            uniq += sum(counts[d] == 1 for d in hits)
        share[run.name] = uniq / rel
    return share


# Computed with the generator before manual-like systems existed (commit 02fe2cc); the default draws must not move.
@pytest.mark.parametrize(("kwargs", "expected"), [
    (dict(n_topics=3, n_systems=5, n_docs=60, depth=20, seed=3), "b3a2e61d2fa50759"),
    (dict(n_topics=3, n_systems=6, n_docs=60, depth=20, seed=4, independent=2, graded=True), "7e93cf216d18420c"),
])
def test_off_by_default_the_output_is_bit_identical(kwargs, expected):
    col = make_collection(**kwargs)
    assert _fingerprint(col) == expected
    assert col.manual == () and col.hidden == {}
    # the new knobs do nothing while manual = 0 and hidden = 0
    inert = make_collection(**kwargs, manual_quality=1.5, hidden_effect=-3.0, hidden_reach=0.2)
    assert _fingerprint(inert) == expected


def test_manual_like_systems_find_more_unique_relevant_documents():
    col = make_collection(**MANUAL)
    assert len(col.manual) == 4 and not set(col.manual) & set(col.independent)
    share = _unique_share(col)
    manual = [share[n] for n in col.manual]
    others = [v for n, v in share.items() if n not in col.manual]
    assert min(manual) > 0.05, manual
    assert max(others) < 0.01, others
    # every hidden relevant document a shared-effect system retrieves is rare; most that are retrieved at all
    # are retrieved by manual-like systems
    auto = [r for r in col.runs if r.name not in col.manual]
    man = [r for r in col.runs if r.name in col.manual]
    hidden_by = {"auto": 0, "manual": 0}
    n_hidden = 0
    for t, docs in col.hidden.items():
        docs = set(docs)
        n_hidden += len(docs)
        hidden_by["auto"] += sum(len(docs & set(r.ranking(t).tolist())) for r in auto)
        hidden_by["manual"] += sum(len(docs & set(r.ranking(t).tolist())) for r in man)
    assert n_hidden > 50
    assert hidden_by["auto"] / (n_hidden * len(auto)) < 0.02
    assert hidden_by["manual"] / (n_hidden * len(man)) > 0.15


def test_manual_like_systems_are_better_on_average():
    col = make_collection(**MANUAL)
    plain = make_collection(**{**MANUAL, "manual_quality": 0.0})
    for name in col.manual:
        assert col.quality[name] == pytest.approx(plain.quality[name] + 0.5)
    for name in set(col.quality) - set(col.manual):
        assert col.quality[name] == plain.quality[name]
    by_topic = _retrieval(col)

    def mean_ap(run):
        aps = []
        for t, (relevant, _) in by_topic.items():
            hits = np.array([d in relevant for d in run.ranking(t).tolist()], float)
            aps.append(float((np.cumsum(hits) / np.arange(1, hits.size + 1) * hits).sum() / len(relevant)))
        return np.mean(aps)

    manual = np.mean([mean_ap(r) for r in col.runs if r.name in col.manual])
    others = np.mean([mean_ap(r) for r in col.runs if r.name not in col.manual])
    assert manual > 1.5 * others, (manual, others)


def test_hidden_reach_splits_the_hidden_documents_between_manual_like_systems():
    """Each manual-like system retrieves about a share ``hidden_reach`` of what it retrieves with reach 1."""
    def hidden_found(col):
        return np.mean([sum(len(set(docs) & set(r.ranking(t).tolist())) for t, docs in col.hidden.items())
                        for r in col.runs if r.name in col.manual])

    full = hidden_found(make_collection(**{**MANUAL, "hidden_reach": 1.0}))
    part = hidden_found(make_collection(**MANUAL))
    assert 0.2 < part / full < 0.4, (part, full)


@pytest.mark.parametrize(("kwargs", "name"), [
    (dict(manual=-1), "manual"), (dict(manual=1.5), "manual"), (dict(manual=7, independent=2), "manual"),
    (dict(manual_quality=-0.1), "manual_quality"), (dict(manual_quality=float("nan")), "manual_quality"),
    (dict(manual_quality="1"), "manual_quality"),
    (dict(hidden=1.0), "hidden"), (dict(hidden=-0.1), "hidden"), (dict(hidden=None), "hidden"),
    (dict(hidden_effect=0.5), "hidden_effect"), (dict(hidden_effect=float("-inf")), "hidden_effect"),
    (dict(hidden_reach=0.0), "hidden_reach"), (dict(hidden_reach=1.2), "hidden_reach"),
])
def test_bad_parameters_name_the_argument(kwargs, name):
    with pytest.raises(BayevalInputError, match=f"^{name}: "):
        make_collection(n_topics=2, n_systems=6, n_docs=40, depth=10, **kwargs)


def test_the_script_marks_manual_like_runs_and_exits_cleanly_on_bad_input(tmp_path, capsys):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "studies"))
    from make_synthetic_collection import main
    from unique_relevant import unique_relevant

    out = tmp_path / "col"
    main([str(out), "--topics", "4", "--systems", "8", "--docs", "200", "--depth", "30", "--independent", "0",
          "--manual", "2", "--hidden", "0.4", "--hidden-effect", "-4", "--hidden-reach", "0.5", "--seed", "3"])
    lines = (out / "runs.tsv").read_text().splitlines()[1:]
    assert sum(line.endswith("\tmanual") for line in lines) == 2
    frame = unique_relevant(out, depth=30)
    assert set(frame["type"]) == {"manual", "automatic"} and len(frame) == 8
    assert frame.attrs["unretrieved"] > 0.05  # the complete truth counts hidden documents no run reaches
    pooled = tmp_path / "pooled"
    main([str(pooled), "--topics", "4", "--systems", "8", "--docs", "200", "--depth", "30", "--independent", "0",
          "--manual", "2", "--hidden", "0.4", "--hidden-effect", "-4", "--hidden-reach", "0.5", "--seed", "3",
          "--truth", "pool"])
    pooled_frame = unique_relevant(pooled, depth=30)
    assert pooled_frame.attrs["unretrieved"] == 0.0
    assert pooled_frame["rel"].tolist() == frame["rel"].tolist()  # same runs, same relevant retrieved
    with pytest.raises(SystemExit, match="manual: must be an integer"):
        main([str(tmp_path / "bad"), "--systems", "8", "--independent", "0", "--manual", "9"])
    with pytest.raises(SystemExit, match="hidden_reach: must lie"):
        main([str(tmp_path / "bad2"), "--hidden-reach", "0"])


def test_manual_signature_splits_bias_and_error_spread_by_run_type():
    """Pairs with a manual run whose standardised ΔMAP errors are 4× as spread (8× unstandardised), and a manual
    run's E[MAP] at half its MAP."""
    import pandas as pd

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "studies"))
    from manual_signature import signature

    rng = np.random.default_rng(0)
    rows = []
    runs = ["m1", "a1", "a2", "a3"]
    truth = {"m1": 0.4, "a1": 0.3, "a2": 0.2, "a3": 0.1}
    for trial in range(50):
        for i, a in enumerate(runs):
            for b in runs[i + 1:]:
                sd = 0.02 if "m1" in (a, b) else 0.01  # the model's sd of ΔMAP; the errors spread 4× that on manual
                err = 4.0 * sd if "m1" in (a, b) else sd
                true_delta = truth[a] - truth[b] + rng.normal(0, 0.01)
                e_map = {r: truth[r] * (0.5 if r == "m1" else 1.0) for r in (a, b)}
                rows.append(dict(method="hier", confidence="mc", trial=trial, run_a=a, run_b=b,
                                 e_map_a=e_map[a], e_map_b=e_map[b], true_map_a=truth[a], true_map_b=truth[b],
                                 p_less=0.995 if true_delta < 0 else 0.005,
                                 e_delta=true_delta + rng.normal(0, err), var_delta=sd ** 2,
                                 true_delta=true_delta))
    out = signature(pd.DataFrame(rows), ["m1"]).set_index("type")
    assert out.loc["manual", "emap_over_map"] == pytest.approx(0.5)
    assert out.loc["automatic", "emap_over_map"] == pytest.approx(1.0)
    assert 3.0 < out.loc["manual", "z_sd"] / out.loc["automatic", "z_sd"] < 5.0
    assert out.loc["manual", "pairs"] == 150 and out.loc["automatic", "pairs"] == 150
    with pytest.raises(BayevalInputError, match="^table: not a robustness trial table"):
        signature(pd.DataFrame(rows).drop(columns="var_delta"), ["m1"])
