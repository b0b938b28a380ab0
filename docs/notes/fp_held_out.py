"""Fingerprints of p for the house's third pass, item 4 (docs/notes/house-third-pass.md, "Item 4, the rest").

Hashes (sha256, 16 digits) the point p and 40 draws of p, MAP and Laplace, of every hierarchical configuration of
``models/`` and ``studies/models/``, of three configurations written with the held-out keys in ``[hierarchy]``
(as files were before ``[held_out_runs]`` existed), of a top-up, and of p beyond the judged depth. Run it in two
checkouts and diff the outputs::

    cd BEFORE && PYTHONPATH=$PWD python /path/to/fp_held_out.py > before.txt
    cd AFTER && PYTHONPATH=$PWD python docs/notes/fp_held_out.py > after.txt
    diff before.txt after.txt
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from bayeval.data import RankData
from bayeval.data.qrels import pool_qrels
from bayeval.relevance import estimate_probabilities
from bayeval.relevance.config import config_from_dict, read_toml
from bayeval.relevance.topup import TopUpSample
from bayeval.synthetic import make_collection

LEGACY = {
    "legacy-fixed": 'kind = "hierarchical"\n[hierarchy]\nrun_level_sd = 1.0\nrun_level_spread = "fixed"\n'
                    'run_shift_sd = 1.5\n',
    "legacy-kept": 'kind = "hierarchical"\n[hierarchy]\ncalibration_map = "crossfit"\ncrossfit_level = "kept"\n'
                   'crossfit_folds = 3\n',
    "legacy-reuse-t": 'kind = "hierarchical"\n[hierarchy]\nreuse_mean = -0.5\nreuse_common_sd = 0.8\n'
                      'reuse_run_sd = 1.0\nreuse_run_df = 4.0\nreuse_slope_sd = 0.3\n',
}


def digest(est) -> str:
    h = hashlib.sha256()
    for p in est.p:
        h.update(np.ascontiguousarray(p).tobytes())
    for d in est.draws or ():
        h.update(np.ascontiguousarray(d).tobytes())
    if est.held_out is not None:
        h.update(repr(est.held_out).encode())
    return h.hexdigest()[:16]


def show(label: str, data: RankData, model, **kw) -> None:
    for fit in ("map", "laplace"):
        est = estimate_probabilities(data, model, fit=fit, seed=1, p_draws=40, draws=200, chains=1, **kw)
        print(label, fit, digest(est), flush=True)


def with_topup(col, data: RankData) -> tuple[RankData, TopUpSample]:
    """Two held-out runs' top-3 unjudged documents of each topic (within their top 20), judged by the truth."""
    rows = []
    for tr in data:
        pos = {d: k for k, d in enumerate(tr.docnos)}
        for run in list(data.systems)[5:7]:
            docs = [d for d in col.runs[run].ranking(tr.topic)[:20] if d in pos and not tr.judged[pos[d]]][:3]
            rows += [{"topic": tr.topic, "docno": d, "grade": max(int(col.qrels.grade_of(tr.topic, d) or 0), 0),
                      "run": run, "round": k + 1, "inclusion": 0.1} for k, d in enumerate(docs)]
    grade = {(r["topic"], r["docno"]): r["grade"] for r in rows}
    per = []
    for tr in data:
        judged, grades = np.array(tr.judged, copy=True), np.array(tr.grades, copy=True)
        for k, d in enumerate(tr.docnos):
            if (tr.topic, d) in grade:
                judged[k], grades[k] = True, grade[(tr.topic, d)]
        per.append(dataclasses.replace(tr, judged=judged, grades=grades))
    return RankData(data.systems, data.topics, tuple(per), data.depth), TopUpSample(pd.DataFrame(rows))


def main(tmp: Path = Path("/tmp")) -> None:
    # judgments from a depth-5 pool of 2 of 10 runs (tests/conftest.py::held_out_data's collection)
    col = make_collection(n_topics=12, n_systems=10, n_docs=300, depth=50, judged_depth=10, seed=300, independent=3)
    data = RankData.build(col.runs, pool_qrels(col.runs.select(list(col.runs.names)[:2]), col.qrels, 5), depth=50)
    for path in sorted(Path("models").glob("hier-*.toml")) + sorted(Path("studies/models").glob("hier-*.toml")):
        show(str(path), data, str(path))
    for name, text in LEGACY.items():
        (tmp / f"{name}.toml").write_text(text)
        show(name, data, config_from_dict(read_toml(tmp / f"{name}.toml"), name=name))
    topped, top = with_topup(col, data)
    for model in ("hier-reuse", "hier-reuse-depth"):
        show(f"topup-{model}", topped, model, topup=top)
    deep = RankData.build(col.runs, pool_qrels(col.runs, col.qrels, 10), depth=50)  # every run judged to 10 of 50
    for model in ("hier-depth", "hier-reuse-depth", "hier-reuse"):
        show(f"deep-{model}", deep, model)


if __name__ == "__main__":
    main()
