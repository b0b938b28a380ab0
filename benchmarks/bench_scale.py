"""MS MARCO-scale benchmark: read + measures, and all-pairs expected ΔMRR@10, beside ranx and pytrec_eval.

Writes a synthetic collection shaped like the MS MARCO passage dev set (6,980 queries, about one judged
relevant passage per query; 10 runs to depth 1,000, and 100 runs to depth 100) and times every step in its
own process, with the peak memory of that process (``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``):

* ``bayeval-trec`` / ``bayeval-msmarco``: read the 10 runs one at a time (TREC / MS MARCO layout) into a
  :class:`~bayeval.data.rankcube.RankCube` and compute RR@10, nDCG@10, AP, recall@1000
  (:func:`bayeval.measures.cube.evaluate_cube`);
* ``ranx``: the same files and measures with ranx (``Run.from_file`` + ``evaluate``), one run at a time;
* ``pytrec_eval``: the same with pytrec_eval (``parse_run`` + ``RelevanceEvaluator``; its ``recip_rank``
  has no cutoff, so it computes RR, not RR@10);
* ``pairs``: read the 100 runs to depth 100, then E, Var and P(Δ<0) of ΔMRR@10 for all 4,950 pairs
  (:func:`bayeval.expected.cube.expected_reciprocal_rank_pairs`, unjudged p = 0.05);
* ``hier`` (run alone: ``--step hier``): the hierarchical relevance model's fast path (Laplace) on 10 of the
  100 runs × 6,980 queries (depth 100), after building the per-topic ``RankData``;
* ``sparse`` (run alone: ``--step sparse``): the sparse-label relevance model
  (:mod:`bayeval.relevance.sparse_labels`, 25 posterior draws) on 10 runs × ``--queries`` queries (depth 100,
  written under ``--out``/sparse), timed against building the per-topic ``RankData`` in the same run;
* ``sparse-projected`` (run alone: ``--step sparse-projected``): the same 10 runs × ``--queries`` queries, the
  sparse-label model with the mean combination (``sparse-default``) and then with the projected one
  (``sparse-default`` with ``combine = "projected"`` and ``share_draws = "topics"``: ``sparse-trec``'s
  combination, vote classes, λ = 0.01, 3 chord steps per draw), 25 posterior draws each, timed in the same
  process (ratio projected / mean), with the peak memory after each;
* ``sparse-pairs`` (run alone: ``--step sparse-pairs``): E, Var and P(Δ<0) of ΔMRR@10 for the 45 pairs of the
  same 10 runs × ``--queries`` queries with the sparse-label model's 25 posterior draws of p
  (:func:`bayeval.expected.cube.expected_reciprocal_rank_pairs` on a ``(draws, S, T, 10)`` array laid on the
  cube by :func:`~bayeval.expected.cube.cells_from_rankdata`), timed after compilation;
* ``pairs-ap`` (run alone: ``--step pairs-ap --queries N``): E, Var and P(Δ<0) of ΔMAP (delta method) for all
  pairs of ``--pair-runs`` runs × N queries (depth 100, p = 0.05) on the rank cube
  (:func:`bayeval.expected.cube_ap.expected_ap_pairs`, timed after compilation, peak memory after it), and the
  per-topic :func:`bayeval.expected.compare_systems` on the first ``--ref-queries`` queries of the same runs
  beside the cube path on those queries: time ratio on the same queries, the reference's time projected to N
  (it is linear in the queries), and the largest difference; with ``--dask``, also the same pairs on a 2-worker
  Dask LocalCluster (speed-up and largest difference);
* ``pairs-ndcg`` / ``pairs-recall`` (run alone, as ``pairs-ap``): the same for ΔnDCG@10
  (:func:`bayeval.expected.cube_ndcg.expected_ndcg_pairs`) and ΔR@1000 (delta method,
  :func:`bayeval.expected.cube_recall.expected_recall_pairs`; lists of 100 are whole);
* ``pairs-dask`` (run alone: ``--step pairs-dask``): the same pairs locally and on a 2-worker Dask
  LocalCluster, both timed after compilation, with the largest difference between the two.

and prints each time as a ratio to ranx's (the goal is ≤ 1.0) and whether each goal is met. The tools'
mean values are compared (the largest difference is printed). Reading before and after a change, on the same
files with wall and CPU time: ``benchmarks/bench_read.py``.

Usage::

    python benchmarks/bench_scale.py                       # full size (about 10 GB of files in --out)
    python benchmarks/bench_scale.py --queries 500 --quick # a small shape while developing
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

MEASURES = "RR@10,nDCG@10,AP,recall@1000"
RANX_METRICS = ["mrr@10", "ndcg@10", "map", "recall@1000"]
P_UNJUDGED = 0.05
PAIR_STEPS = {"pairs-ap": "AP", "pairs-ndcg": "nDCG@10", "pairs-recall": "recall@1000"}


# ---------------------------------------------------------------------------------------------- data
def _write_collection(out: Path, n_q: int, n_runs: int, depth: int, pool: int, seed: int, tag: str,
                      msmarco: bool) -> list[Path]:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    n_rel = 1 + rng.poisson(0.065, n_q)  # 7,437 / 6,980 judgments per query on average
    qids = np.arange(1, n_q + 1) * 7 + 1000  # non-contiguous ids, as MS MARCO's
    qrels = out / "qrels.txt"
    if not qrels.exists():
        qq = np.repeat(qids, n_rel)
        jj = np.concatenate([np.arange(k) for k in n_rel])
        docs = qq.astype(np.int64) * pool + jj
        pcsv.write_csv(pa.table({"q": qq, "z": pa.repeat(0, len(qq)), "d": docs, "g": pa.repeat(1, len(qq))}),
                       qrels, pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none"))
    eta = rng.normal(0, 0.5, (n_q, pool))
    y = (np.arange(pool)[None, :] < n_rel[:, None]).astype(np.float64)
    quality = np.linspace(0.5, 3.0, n_runs)
    paths = []
    for s in range(n_runs):
        path = out / f"{tag}{s:03d}.{'tsv' if msmarco else 'trec'}"
        paths.append(path)
        if path.exists():
            continue
        score = quality[s] * y + eta + rng.normal(0, 1, (n_q, pool))
        top = np.argpartition(-score, depth - 1, axis=1)[:, :depth]
        top_scores = np.take_along_axis(score, top, axis=1)
        order = np.argsort(-top_scores, axis=1)
        top = np.take_along_axis(top, order, axis=1)
        top_scores = np.round(np.take_along_axis(top_scores, order, axis=1), 6)
        q = np.repeat(qids, depth)
        d = (q.astype(np.int64) * pool + top.ravel())
        rank = np.tile(np.arange(1, depth + 1), n_q)
        if msmarco:
            table = pa.table({"q": q, "d": d, "r": rank})
            opts = pcsv.WriteOptions(include_header=False, delimiter="\t", quoting_style="none")
        else:
            table = pa.table({"q": q, "z": pa.repeat("Q0", len(q)), "d": d, "r": rank, "s": top_scores.ravel(),
                              "t": pa.repeat(f"{tag}{s:03d}", len(q))})
            opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
        pcsv.write_csv(table, path, opts)
    return paths


def _cpu_s() -> float:
    """CPU seconds of this process so far (user + system, every thread): a load-independent cost."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _subset_files(files: list[Path], where: Path, qids: list[int]) -> list[Path]:
    """The MS MARCO-layout run ``files`` cut to the queries ``qids`` (written once under ``where``)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    where.mkdir(parents=True, exist_ok=True)
    out = []
    keep = pa.array(qids, type=pa.int64())
    for f in files:
        path = where / f.name
        out.append(path)
        if path.exists():
            continue
        table = pcsv.read_csv(f, pcsv.ReadOptions(column_names=["q", "d", "r"]),
                              pcsv.ParseOptions(delimiter="\t"))
        pcsv.write_csv(table.filter(pc.is_in(table["q"], value_set=keep)), path,
                       pcsv.WriteOptions(include_header=False, delimiter="\t", quoting_style="none"))
    return out


# ---------------------------------------------------------------------------------------------- steps
def _step(name: str, args) -> dict:
    out = Path(args.out)
    trec = sorted((out / "deep").glob("*.trec"))
    qrels_path = out / "deep" / "qrels.txt"
    if name in ("bayeval-trec", "bayeval-msmarco"):
        from bayeval.data.rankcube import RankCube
        from bayeval.io.qrels import read_qrels
        from bayeval.measures.cube import evaluate_cube

        files = trec if name == "bayeval-trec" else sorted((out / "deep").glob("*.tsv"))
        qrels = read_qrels(qrels_path)
        cube = RankCube.from_files(files, qrels, depth=1000, code_depth=0)
        t_read = time.perf_counter()
        means = evaluate_cube(cube, MEASURES).mean()
        return {"means": means.tolist(), "read_s": t_read}
    if name == "ranx":
        from ranx import Qrels, Run, evaluate

        qrels = Qrels.from_file(str(qrels_path), kind="trec")
        means = []
        for f in trec:
            run = Run.from_file(str(f), kind="trec")
            res = evaluate(qrels, run, RANX_METRICS)
            means.append([res[m] for m in RANX_METRICS])
            del run
        return {"means": np.array(means).T.tolist()}
    if name == "pytrec_eval":
        import pytrec_eval

        with open(qrels_path) as fh:
            qrel = pytrec_eval.parse_qrel(fh)
        ev = pytrec_eval.RelevanceEvaluator(qrel, {"recip_rank", "ndcg_cut_10", "map", "recall_1000"})
        means = []
        for f in trec:
            with open(f) as fh:
                run = pytrec_eval.parse_run(fh)
            res = ev.evaluate(run)
            means.append([float(np.mean([r[m] for r in res.values()]))
                          for m in ("recip_rank", "ndcg_cut_10", "map", "recall_1000")])
            del run, res
        return {"means": np.array(means).T.tolist()}
    if name == "pairs":
        from bayeval.data.rankcube import RankCube
        from bayeval.expected.cube import expected_reciprocal_rank_pairs
        from bayeval.io.qrels import read_qrels

        files = sorted((out / "wide").glob("*.tsv"))
        cube = RankCube.from_files(files, read_qrels(out / "wide" / "qrels.txt"), depth=100, code_depth=10)
        t_read = time.perf_counter()
        res = expected_reciprocal_rank_pairs(cube, P_UNJUDGED, cutoff=10)
        return {"read_s": t_read, "pairs": len(res.p_less), "calls_095": int(np.sum(np.maximum(
            res.p_less, 1 - res.p_less) >= 0.95))}
    if name == "hier":
        from bayeval.data.rankdata import RankData
        from bayeval.io.qrels import read_qrels
        from bayeval.io.runs import read_runs
        from bayeval.relevance import estimate_probabilities

        files = sorted((out / "wide").glob("*.tsv"))[:10]
        data = RankData.build(read_runs(files, run_names="file"), read_qrels(out / "wide" / "qrels.txt"))
        t_read = time.perf_counter()
        est = estimate_probabilities(data, "hier", fit="laplace", p_draws=None, seed=1)
        t_fit = time.perf_counter() - t_read
        p_top = float(np.mean([np.mean(p[~tr.judged]) for p, tr in zip(est.arrays(), data, strict=True)]))
        return {"read_s": t_read, "fit_s": t_fit, "topics": len(data), "mean_p_unjudged": p_top}
    if name == "sparse":
        from bayeval.data.rankdata import RankData
        from bayeval.io.qrels import read_qrels
        from bayeval.io.runs import read_runs
        from bayeval.relevance import estimate_probabilities

        files = _write_collection(out / "sparse", args.queries, 10, 100, 300, args.seed + 2, "sparse", True)
        t0 = time.perf_counter()
        data = RankData.build(read_runs(files, run_names="file"), read_qrels(out / "sparse" / "qrels.txt"))
        t_build = time.perf_counter() - t0
        peak_build = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        est = estimate_probabilities(data, "sparse", p_draws=25, seed=1)
        t_fit = time.perf_counter() - t0
        p_unj = float(np.mean(np.concatenate([p[~tr.judged] for p, tr in zip(est.p, data, strict=True)])))
        top10 = [np.unique(tr.ranked[:, :10][tr.ranked[:, :10] >= 0]) for tr in data]
        p_top10 = float(np.mean(np.concatenate([p[i[~tr.judged[i]]] for p, tr, i in zip(est.p, data, top10,
                                                                                         strict=True)])))
        return {"build_s": t_build, "fit_s": t_fit, "fit_over_build": t_fit / t_build, "topics": len(data),
                "peak_after_build_mb": peak_build,
                "mean_p_unjudged": p_unj, "mean_p_unjudged_top10": p_top10}
    if name == "sparse-projected":
        import dataclasses

        from bayeval.data.rankdata import RankData
        from bayeval.io.qrels import read_qrels
        from bayeval.io.runs import read_runs
        from bayeval.relevance import estimate_probabilities, load_config

        files = _write_collection(out / "sparse", args.queries, 10, 100, 300, args.seed + 2, "sparse", True)
        data = RankData.build(read_runs(files, run_names="file"), read_qrels(out / "sparse" / "qrels.txt"))
        peak_build = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        mean_cfg = load_config("sparse-default")
        proj_cfg = dataclasses.replace(mean_cfg, name="sparse-default-projected", combine="projected",
                                       share_draws="topics")
        res = {"topics": len(data), "peak_after_build_mb": peak_build}
        for tag, cfg in (("mean", mean_cfg), ("projected", proj_cfg)):
            t0 = time.perf_counter()
            est = estimate_probabilities(data, cfg, p_draws=25, seed=1)
            res[f"{tag}_fit_s"] = time.perf_counter() - t0
            res[f"{tag}_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            res[f"{tag}_mean_p_unjudged"] = float(np.mean(np.concatenate(
                [p[~tr.judged] for p, tr in zip(est.p, data, strict=True)])))
            del est
        res["projected_over_mean"] = res["projected_fit_s"] / res["mean_fit_s"]
        return res
    if name == "sparse-pairs":
        from bayeval.data.rankcube import RankCube
        from bayeval.data.rankdata import RankData
        from bayeval.expected.cube import cells_from_rankdata, expected_reciprocal_rank_pairs
        from bayeval.io.qrels import read_qrels
        from bayeval.io.runs import read_runs
        from bayeval.relevance import estimate_probabilities

        files = _write_collection(out / "sparse", args.queries, 10, 100, 300, args.seed + 2, "sparse", True)
        runs = read_runs(files, run_names="file")
        qrels = read_qrels(out / "sparse" / "qrels.txt")
        cube = RankCube.from_runs(runs, qrels, depth=10)
        data = RankData.build(runs, qrels, topics=cube.topics)
        est = estimate_probabilities(data, "sparse", p_draws=25, seed=1)
        t0 = time.perf_counter()
        cells = cells_from_rankdata(cube, data, est.draws)
        t_cells = time.perf_counter() - t0
        small = RankCube.from_runs(read_runs(files[:2], run_names="file"), qrels, depth=10)
        expected_reciprocal_rank_pairs(small, np.full((2, *small.docs.shape), 0.01), cutoff=10)  # compile
        t0 = time.perf_counter()
        res = expected_reciprocal_rank_pairs(cube, cells, cutoff=10)
        t_pairs = time.perf_counter() - t0
        t0 = time.perf_counter()  # reference: one call of the one-p path per draw, combined in numpy
        per = [expected_reciprocal_rank_pairs(cube, row, cutoff=10) for row in cells]
        de = np.array([x.delta_expected for x in per])
        ref_v = np.mean([x.delta_variance for x in per], axis=0) + de.var(axis=0)
        t_ref = time.perf_counter() - t0
        diff = float(max(np.abs(de.mean(axis=0) - res.delta_expected).max(),
                         np.abs(ref_v - res.delta_variance).max()))
        point = expected_reciprocal_rank_pairs(cube, cells.mean(axis=0), cutoff=10)  # p = mean of the draws
        ratio = float(np.median(res.delta_variance / np.maximum(point.delta_variance, 1e-300)))
        return {"topics": len(cube.topics), "pairs": len(res.p_less), "draws": res.n_draws, "cells_s": t_cells,
                "pairs_s": t_pairs, "per_draw_loop_s": t_ref, "ratio_to_loop": t_pairs / t_ref,
                "max_diff_to_loop": diff, "calls_095": int(np.sum(np.maximum(res.p_less, 1 - res.p_less) >= 0.95)),
                "median_var_ratio_draws_to_point": ratio}
    if name in PAIR_STEPS:
        from bayeval.data.qrels import Qrels
        from bayeval.data.rankcube import RankCube
        from bayeval.data.rankdata import RankData
        from bayeval.expected import compare_systems
        from bayeval.expected.cube_ap import expected_ap_pairs
        from bayeval.expected.cube_ndcg import expected_ndcg_pairs
        from bayeval.expected.cube_recall import expected_recall_pairs
        from bayeval.io.qrels import read_qrels
        from bayeval.io.runs import read_runs

        measure = PAIR_STEPS[name]

        def on_cube(c, **kw):  # the cube path of the step's measure (delta method where it has a method)
            if measure == "AP":
                return expected_ap_pairs(c, P_UNJUDGED, method="delta", **kw)
            if measure.startswith("nDCG"):
                return expected_ndcg_pairs(c, P_UNJUDGED, cutoff=10, **kw)
            return expected_recall_pairs(c, P_UNJUDGED, cutoff=1000, method="delta", **kw)

        where = out / f"wide-ap{args.queries}"
        files = _write_collection(where, args.queries, args.pair_runs, 100, 300, args.seed + 1, "wide", True)
        qrels = read_qrels(where / "qrels.txt")
        t0 = time.perf_counter()
        cube = RankCube.from_files(files, qrels, depth=100)  # code_depth=None: AP tells every document apart
        t_read = time.perf_counter() - t0
        on_cube(cube, pairs=np.array([[0, 1]]))  # compile (cached after the first run)
        t0, c0 = time.perf_counter(), _cpu_s()
        res = on_cube(cube)
        t_cube, c_cube = time.perf_counter() - t0, _cpu_s() - c0
        peak_cube = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # reference: the per-topic compare_systems on the first --ref-queries queries of the same runs
        n_ref = min(args.ref_queries, len(cube.topics))
        sub_q = Qrels({t: qrels[t] for t in cube.topics[:n_ref]}, qrels.relevance_level)
        sub_files = _subset_files(files, where / f"ref{n_ref}", [int(t) for t in cube.topics[:n_ref]])
        sub_cube = RankCube.from_files(sub_files, sub_q, depth=100)
        t0 = time.perf_counter()
        sub = on_cube(sub_cube)
        t_cube_sub = time.perf_counter() - t0
        data = RankData.build(read_runs(sub_files, run_names="file"), sub_q, topics=sub_cube.topics)
        compare_systems(data, default_p=P_UNJUDGED, pairs=[(0, 1)], measure=measure, method="delta", progress=False)
        t0 = time.perf_counter()
        ref = compare_systems(data, default_p=P_UNJUDGED, measure=measure, method="delta", progress=False)
        t_ref = time.perf_counter() - t0
        diff = max(np.abs(sub.delta_expected - ref.all_expected).max(),
                   np.abs(sub.delta_variance - ref.all_variance).max(), np.abs(sub.p_less - ref.all_p_less).max())
        same_topics = float(np.abs(res.expected[:, :n_ref] - sub.expected).max())
        dask = {}
        if args.dask:  # the same pairs with the topics split into Dask tasks on 2 local workers
            from distributed import Client, LocalCluster

            with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
                    Client(cluster) as client:
                on_cube(cube, pairs=np.array([[0, 1]]), scheduler=client)  # compile there
                t0 = time.perf_counter()
                remote = on_cube(cube, scheduler=client)
                t_dask = time.perf_counter() - t0
            dask = {"dask_s": t_dask, "dask_speedup": t_cube / t_dask, "dask_max_diff": float(max(
                np.abs(remote.delta_expected - res.delta_expected).max(),
                np.abs(remote.delta_variance - res.delta_variance).max(), np.abs(remote.p_less - res.p_less).max()))}
        return {"measure": measure, "topics": len(cube.topics), "pairs": len(res.p_less), "read_cube_s": t_read,
                "cube_s": t_cube, "cube_cpu_s": c_cube, "peak_after_cube_mb": peak_cube, "ref_topics": n_ref,
                "cube_ref_topics_s": t_cube_sub, "compare_systems_ref_topics_s": t_ref,
                "ratio_same_topics": t_cube_sub / t_ref,
                "compare_systems_projected_s": t_ref * len(cube.topics) / n_ref,
                "ratio_to_projected": t_cube / (t_ref * len(cube.topics) / n_ref), "max_diff": float(diff),
                "max_diff_full_vs_subset_per_topic": same_topics, "exact_topics": res.exact_topics,
                "calls_095": int(np.sum(np.maximum(res.p_less, 1 - res.p_less) >= 0.95)), **dask}
    if name == "pairs-dask":
        from distributed import Client, LocalCluster

        from bayeval.data.rankcube import RankCube
        from bayeval.expected.cube import expected_reciprocal_rank_pairs
        from bayeval.io.qrels import read_qrels

        files = sorted((out / "wide").glob("*.tsv"))
        cube = RankCube.from_files(files, read_qrels(out / "wide" / "qrels.txt"), depth=100, code_depth=10)
        expected_reciprocal_rank_pairs(cube, P_UNJUDGED, cutoff=10, pairs=np.array([[0, 1]]))  # compile
        t0 = time.perf_counter()
        local = expected_reciprocal_rank_pairs(cube, P_UNJUDGED, cutoff=10)
        t_local = time.perf_counter() - t0
        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            expected_reciprocal_rank_pairs(cube, P_UNJUDGED, cutoff=10, pairs=np.array([[0, 1]]), scheduler=client)
            t0 = time.perf_counter()
            remote = expected_reciprocal_rank_pairs(cube, P_UNJUDGED, cutoff=10, scheduler=client)
            t_dask = time.perf_counter() - t0
        diff = max(np.abs(remote.delta_expected - local.delta_expected).max(),
                   np.abs(remote.delta_variance - local.delta_variance).max(),
                   np.abs(remote.p_less - local.p_less).max())
        return {"local_s": t_local, "dask_s": t_dask, "max_diff": float(diff)}
    raise SystemExit(f"unknown step {name}")


def _run_step(name: str, args) -> dict:
    cmd = [sys.executable, __file__, "--step", name, "--out", args.out]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ)
    wall = time.perf_counter() - t0
    if proc.returncode:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["wall_s"] = wall
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/bayeval-scale")
    ap.add_argument("--queries", type=int, default=6980)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--pair-runs", type=int, default=100)
    ap.add_argument("--ref-queries", type=int, default=100,
                    help="pairs-ap: queries on which the per-topic compare_systems reference runs (default 100)")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--quick", action="store_true", help="skip pytrec_eval")
    ap.add_argument("--dask", action="store_true", help="pairs-ap/-ndcg/-recall: also on a 2-worker Dask LocalCluster")
    ap.add_argument("--step", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.step:
        t0 = time.perf_counter()
        res = _step(args.step, args)
        res["seconds"] = time.perf_counter() - t0
        if "read_s" in res:
            res["read_s"] -= t0
        res["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(res))
        return
    out = Path(args.out)
    t0 = time.perf_counter()
    _write_collection(out / "deep", args.queries, args.runs, 1000, 3000, args.seed, "deep", False)
    _write_collection(out / "deep", args.queries, args.runs, 1000, 3000, args.seed, "deep", True)
    _write_collection(out / "wide", args.queries, args.pair_runs, 100, 300, args.seed + 1, "wide", True)
    print(f"collection written to {out} in {time.perf_counter() - t0:.0f} s "
          f"({args.queries} queries; {args.runs} runs × 1000; {args.pair_runs} runs × 100)")
    steps = ["bayeval-trec", "bayeval-msmarco", "ranx"] + ([] if args.quick else ["pytrec_eval"]) + ["pairs"]
    results = {}
    for name in steps:
        results[name] = r = _run_step(name, args)
        if "error" in r:
            print(f"{name:16s} not run: {r['error']}")
            continue
        extra = f"  (read {r['read_s']:.1f} s)" if "read_s" in r else ""
        print(f"{name:16s} {r['seconds']:7.1f} s  peak {r['peak_mb']:7.0f} MB{extra}", flush=True)
    ranx = results.get("ranx", {})
    for name in ("bayeval-trec", "bayeval-msmarco", "pytrec_eval"):
        r = results.get(name, {})
        if "seconds" in r and "seconds" in ranx:
            print(f"ratio {name} / ranx: {r['seconds'] / ranx['seconds']:.3f}")
    if "means" in results.get("bayeval-trec", {}) and "means" in ranx:
        diff = np.abs(np.array(results["bayeval-trec"]["means"]) - np.array(ranx["means"])).max()
        print(f"largest |bayeval - ranx| over runs and measures (means): {diff:.2e}")
    if "means" in results.get("bayeval-trec", {}) and "means" in results.get("pytrec_eval", {}):
        diff = np.abs(np.array(results["bayeval-trec"]["means"])[1:]
                      - np.array(results["pytrec_eval"]["means"])[1:]).max()
        print(f"largest |bayeval - pytrec_eval| (nDCG@10, AP, recall@1000 means): {diff:.2e}")
    bt = results.get("bayeval-trec", {})
    if "seconds" in bt:
        ok = bt["seconds"] <= 30 and bt["peak_mb"] <= 4096 and bt["seconds"] <= ranx.get("seconds", np.inf)
        print(f"goal read + 4 measures, 10 runs: ≤ ranx, ≤ 30 s, ≤ 4 GB: {'met' if ok else 'missed'}")
    pr = results.get("pairs", {})
    if "seconds" in pr:
        compute = pr["seconds"] - pr["read_s"]
        print(f"pairs: {pr['pairs']} pairs, read {pr['read_s']:.1f} s, E/Var/P(Δ<0) of ΔMRR@10 {compute:.1f} s, "
              f"peak {pr['peak_mb']:.0f} MB; calls at ≥ 0.95: {pr['calls_095']}")


if __name__ == "__main__":
    main()
