"""Where the sparse-label model's lean on Robust 2003 comes from (docs/notes/sparse-labels-record.md, "Diagnosis").

For each trial of the sparse-label study (AP, depth 100) it prints, per run, the bias of E[MAP] against the deep
MAP and what might explain it: the model's mean p of the run's unjudged top-100 documents against the share of
them that the deep judgments call relevant, the run's unjudged-in-the-deep-pool share, and the same bias with an
*oracle* p (every run-and-rank-bin cell given its true rate of relevant among its unjudged positions, averaged
over the runs retrieving a document as the model does). Then, for the pairs in the over-confident bins
(P(Δ<0) in 0.3–0.5), E[ΔMAP], sd(ΔMAP) and the deep ΔMAP.

    python studies/sparse_bias_diagnosis.py ../shared/data/robust03 --trials 5
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse

from bayeval.data.qrels import Qrels
from bayeval.data.rankcube import RankCube
from bayeval.data.rankdata import RankData
from bayeval.expected.cube import cells_from_rankdata
from bayeval.expected.cube_ap import expected_ap_pairs
from bayeval.experiments.collection import load_collection
from bayeval.experiments.sparse import sparse_labels
from bayeval.measures import evaluate
from bayeval.relevance import estimate_probabilities
from bayeval.relevance.cell_projection import project_onto_cells
from bayeval.relevance.sparse_labels import rank_layout

#: the study variants' model configurations (not shipped; loaded by path)
STUDY_MODELS = Path(__file__).resolve().parent / "models"


BIN_EDGES = (1, 2, 3, 4, 6, 11, 21, 51, 101, 201, 501)


def oracle_p(data: RankData, deep: Qrels, cells: str = "run-bin", projection_ridge: float = 1e-4):
    """Per topic, p of each document: the mean over the runs retrieving it of its cell's true rate.

    ``cells``: ``run-bin`` (the model's cells), ``topic-run-bin`` (each topic its own), ``run-bin-votes`` (the
    model's cells split by how many runs retrieve the document: 1, 2-3, 4-7, 8+), ``document`` (p = the deep
    judgment itself: what is left is the moments' denominator, R inside the runs' union against the qrels' R_t),
    ``run-bin-logodds`` (the model's cells' true rates combined per document by a log-odds sum around the base
    rate π of the union, logit p = logit π + Σ_s (logit q_s − logit π), instead of their mean),
    ``run-bin-projected`` (the ``run-bin`` mean projected onto the cells' true relevant counts:
    :func:`bayeval.relevance.cell_projection.project_onto_cells`, every cell's mean p its true rate).
    """
    lay = rank_layout(data)
    nb = len(BIN_EDGES)
    cell = lay.system * nb + (np.searchsorted(np.asarray(BIN_EDGES) - 1, lay.rank, side="right") - 1)
    logodds = cells == "run-bin-logodds"
    projected = cells in ("run-bin-projected", "run-bin-projected-votes")
    if cells == "document":
        cell = lay.doc
    elif cells == "topic-run-bin":
        cell = cell + lay.topic * (lay.n_systems * nb)
    elif cells == "run-bin-votes":
        votes = np.bincount(lay.doc, minlength=lay.n_docs)[lay.doc]
        cell = cell * 4 + np.searchsorted([2, 4, 8], votes, side="right")
    size = int(cell.max()) + 1
    deep_rel = np.concatenate([np.isin(tr.docnos, deep[tr.topic].docnos[np.asarray(deep[tr.topic].grades)
                                                                         >= deep.relevance_level])
                               if tr.topic in deep.topics else np.zeros(tr.n_docs, bool) for tr in data])
    unj = ~lay.judged_relevant[lay.doc]
    n = np.bincount(cell[unj], minlength=size)
    r = np.bincount(cell[unj], weights=deep_rel[lay.doc][unj].astype(float), minlength=size)
    rate = r / np.maximum(n, 1)
    cnt = np.bincount(lay.doc, minlength=lay.n_docs)
    if logodds:
        base = deep_rel.mean()
        q = np.clip(rate[cell], 1e-4, 1 - 1e-4)
        z = np.bincount(lay.doc, weights=np.log(q / (1 - q)) - np.log(base / (1 - base)), minlength=lay.n_docs)
        p = np.where(cnt > 0, 1 / (1 + np.exp(-(np.log(base / (1 - base)) + z))), 0.0)
    else:
        p = np.bincount(lay.doc, weights=rate[cell], minlength=lay.n_docs) / np.maximum(cnt, 1)
    if projected:
        inc = sparse.csr_matrix((np.ones(int(unj.sum())), (lay.doc[unj], cell[unj])), shape=(lay.n_docs, size))
        targets = r
        if cells == "run-bin-projected-votes":  # and the share relevant per vote class (1, 2-3, 4-7, 8+ runs)
            unj_doc = np.zeros(lay.n_docs, bool)
            unj_doc[lay.doc[unj]] = True
            d = np.flatnonzero(unj_doc)
            vote = np.searchsorted([2, 4, 8], cnt[d], side="right")
            inc = sparse.hstack([inc, sparse.csr_matrix((np.ones(len(d)), (d, vote)), shape=(lay.n_docs, 4))])
            targets = np.concatenate([r, np.bincount(vote, weights=deep_rel[d].astype(float), minlength=4)])
        p = project_onto_cells(inc.tocsr(), p, targets, ridge=projection_ridge).p
    return np.split(p, lay.offsets[1:-1]), deep_rel, lay


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("collection")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--model", default=str(STUDY_MODELS / "sparse-trec.toml"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--oracle", default="run-bin", choices=("run-bin", "topic-run-bin", "run-bin-votes",
                                                                "document", "run-bin-logodds", "run-bin-projected",
                                                                "run-bin-projected-votes"))
    args = ap.parse_args()
    col = load_collection(args.collection)
    runs, deep = col.runs(col.run_names), col.qrels()
    per_run, pairs = [], []
    for i in range(args.trials):
        rng = np.random.default_rng([args.seed, i])  # the study's trial i
        sparse = sparse_labels(deep, rng)
        data = RankData.build(runs, sparse, depth=100)
        truth_t = evaluate(RankData.build(runs, deep, topics=data.topics, depth=100), "AP").values[0]
        truth = truth_t.mean(axis=1)
        est = estimate_probabilities(data, args.model, seed=int(rng.integers(2**31)))
        cube = RankCube.from_runs(runs, sparse, depth=100)
        res = expected_ap_pairs(cube, cells_from_rankdata(cube, data, est.arrays_for("delta")), method="delta")
        p_or, deep_rel, lay = oracle_p(data, deep, args.oracle)
        res_or = expected_ap_pairs(cube, cells_from_rankdata(cube, data, p_or), method="delta")
        # per run: mean model p vs deep share relevant over the run's unjudged top-100 positions
        p_all = np.concatenate(est.p)
        unj = ~lay.judged_relevant[lay.doc]
        deep_judged = np.concatenate([np.isin(tr.docnos, deep[tr.topic].docnos) for tr in data])
        for s, name in enumerate(data.systems):
            m = unj & (lay.system == s)
            per_run.append({"trial": i, "run": name, "truth": truth[s], "bias": res.all_expected[s] - truth[s],
                            "bias_oracle": res_or.all_expected[s] - truth[s],
                            "p_model": p_all[lay.doc[m]].mean(), "p_true": deep_rel[lay.doc[m]].mean(),
                            "unpooled": 1 - deep_judged[lay.doc[m]].mean(),
                            "judged_hits": int((~unj & (lay.system == s)).sum())})
        er = np.add.reduceat(p_all * ~lay.judged_relevant + lay.judged_relevant, lay.offsets[:-1])
        er_or = np.add.reduceat(np.concatenate(p_or) * ~lay.judged_relevant + lay.judged_relevant, lay.offsets[:-1])
        in_union = np.add.reduceat(deep_rel.astype(float), lay.offsets[:-1])
        r_true = np.array([int((np.asarray(deep[t].grades) >= deep.relevance_level).sum()) for t in data.topics])
        print(f"trial {i}: mean over topics of E[R] model {er.mean():.1f}, oracle {er_or.mean():.1f}; relevant in "
              f"the depth-100 union {in_union.mean():.1f}; qrels R_t {r_true.mean():.1f}", flush=True)
        sd = np.sqrt(res.delta_variance)
        pairs.append(pd.DataFrame({"trial": i, "a": np.array(data.systems)[res.index_a],
                                   "b": np.array(data.systems)[res.index_b], "p_less": res.p_less,
                                   "p_less_oracle": res_or.p_less, "e": res.delta_expected, "sd": sd,
                                   "e_oracle": res_or.delta_expected,
                                   "true": truth[res.index_a] - truth[res.index_b]}))
    pr = pd.DataFrame(per_run)
    pd.set_option("display.width", 200)
    print("per run, mean over trials (ratio: E[MAP] / deep MAP):")
    g = pr.groupby("run").mean(numeric_only=True).drop(columns="trial")
    g["ratio"] = 1 + g["bias"] / g["truth"]
    g["ratio_oracle"] = 1 + g["bias_oracle"] / g["truth"]
    print(g.sort_values("ratio").round(3).to_string())
    g = pr.groupby("run").mean(numeric_only=True)
    print(f"per run mean bias: model {g['bias'].mean():+.4f} (sd over runs {g['bias'].std():.4f}, corr with truth "
          f"{np.corrcoef(g['bias'], g['truth'])[0, 1]:+.2f}); oracle {g['bias_oracle'].mean():+.4f} (sd "
          f"{g['bias_oracle'].std():.4f}, corr {np.corrcoef(g['bias_oracle'], g['truth'])[0, 1]:+.2f})")
    print("corr(bias, p_model - p_true) =", round(np.corrcoef(pr["bias"], pr["p_model"] - pr["p_true"])[0, 1], 3),
          " corr(bias, unpooled) =", round(np.corrcoef(pr["bias"], pr["unpooled"])[0, 1], 3),
          " corr(bias, truth) =", round(np.corrcoef(pr["bias"], pr["truth"])[0, 1], 3))
    pf = pd.concat(pairs, ignore_index=True)
    z = (pf["e"] - pf["true"]) / pf["sd"]
    print(f"all pairs: z = (E - true)/sd: mean |z| {np.abs(z).mean():.2f}, sd {z.std():.2f}; "
          f"share |z|>2 {np.mean(np.abs(z) > 2):.3f}")
    for col_p in ("p_less", "p_less_oracle"):
        sel = pf[(pf[col_p] >= 0.3) & (pf[col_p] < 0.5)]
        print(f"{col_p} in 0.3-0.5: {len(sel)} pairs, freq Δ<0 {np.mean(sel['true'] < 0):.2f}")
    sel = pf[(pf["p_less"] >= 0.3) & (pf["p_less"] < 0.5)]
    print("over-confident pairs (model p_less 0.3-0.5): E, sd, true, E_oracle (means):",
          sel[["e", "sd", "true", "e_oracle", "p_less_oracle"]].mean().round(4).to_dict())
    print("runs in them (count as a / as b, among pairs with Δ<0):")
    wrong = sel[sel["true"] < 0]
    print(pd.concat([wrong["a"].value_counts().rename("as_a"), wrong["b"].value_counts().rename("as_b")],
                    axis=1).fillna(0).astype(int).sort_values("as_a", ascending=False).head(12))


if __name__ == "__main__":
    main()
