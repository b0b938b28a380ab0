"""MS MARCO-scale benchmark: every goal of the scale work in one run, beside ranx and pytrec_eval (docs/scale.md).

Writes a synthetic collection shaped like the MS MARCO passage dev set (6,980 queries, about one judged
relevant passage per query; runs to depth 1,000 in TREC and MS MARCO layouts, and 100 runs to depth 100) under
``--out`` (not in the repository), and runs each step in its own process, with that process's wall time and peak
memory (``os.wait4``'s ``ru_maxrss``). ``python benchmarks/bench_scale.py`` runs the goals (the default steps):

* ``measures`` vs ``ranx`` vs ``pytrec_eval``: ``bayeval measures -m AP,nDCG@10,RR@10,R@1000`` on 4 runs × 6,980
  queries × depth 1,000 (TREC files; the whole command, imports included) against ranx (``Run.from_file`` +
  ``evaluate`` one run at a time, *warm*: its numba functions compiled on a small run first, and only the reading
  and evaluating timed) and pytrec_eval (``parse_run`` + ``RelevanceEvaluator``; its ``recip_rank`` has no
  cutoff). Goal: wall ≤ 0.8 × ranx's, peak memory ≤ ranx's; the same values (largest difference printed);
* ``measures-repeat`` vs ``ranx-repeat``: the same with one document listed twice in each file (copies under
  ``--out``/deep-repeat);
* ``trec8`` (``evaluate-trec8``): ``bayeval evaluate`` of all 8,256 pairs of the 129 TREC-8 runs with the default
  model fitted, and with a probabilities file (written first by ``bayeval estimate``); needs ``../shared/data``.
  Goals ≤ 6 s and ≤ 3.5 s;
* ``hier``: the default relevance model (:data:`bayeval.defaults.DEFAULT_MODEL`, the hierarchical
  ``hier-reuse-depth``) fitted on 10 runs × 6,980 queries (depth 100), the fit alone timed after reading, and the
  Laplace fit with posterior draws of p beside it. Goal ≤ 60 s, ≤ 6 GB;
* ``hier-pairs``: 100 runs × 6,980 queries × depth 100 read, the default model fitted, its p laid on the rank
  cube and E, Var, P(ΔMAP<0) of every pair (:func:`bayeval.expected.cube_ap.expected_ap_pairs`, delta method).
  Goal ≤ 120 s, ≤ 8 GB for the whole process;
* ``measures-100``: ``bayeval measures`` on 100 runs × 6,980 queries × depth 1,000 (the 10 TREC files linked ten
  times each under their own names: the reading and the memory of 100 runs). Goal ≤ 6 GB peak.

Other steps, run alone with ``--step NAME``: ``bayeval-trec`` / ``bayeval-msmarco`` (10 runs read into a
``RankCube`` + RR@10, nDCG@10, AP, recall@1000), ``pairs`` (ΔMRR@10 of all 4,950 pairs of the 100 runs),
``sparse``, ``sparse-projected``, ``sparse-pairs`` (the sparse-label model), ``pairs-ap`` / ``pairs-ndcg`` /
``pairs-recall`` (all pairs on the cube against the per-topic ``compare_systems`` on ``--ref-queries`` queries;
``--dask`` adds a 2-worker LocalCluster), ``pairs-dask`` (ΔMRR@10 locally and on Dask); docs/benchmarks.md
describes each and its figures.

Usage::

    python benchmarks/bench_scale.py --out /tmp/bayeval-scale            # the goals (about 12 GB of files)
    python benchmarks/bench_scale.py --out /tmp/bs --queries 500 --quick  # a small shape while developing
    python benchmarks/bench_scale.py --step pairs-ap --out /tmp/bs --queries 6980 --ref-queries 100
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MEASURES = "RR@10,nDCG@10,AP,recall@1000"
RANX_METRICS = ["mrr@10", "ndcg@10", "map", "recall@1000"]
CLI_MEASURES = "RR@10,nDCG@10,AP,R@1000"  # the field's names, as a user types them (the order of RANX_METRICS)
GOAL_RUNS = 4  # runs of the measures goal (MS MARCO shape, depth 1,000)
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
P_UNJUDGED = 0.05
#: the goals --goals takes
GOALS = {"measures", "trec8", "hier", "measures-100"}
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


def _goal_files(out: Path, repeat: bool) -> list[Path]:
    """The measures goal's run files: the first :data:`GOAL_RUNS` TREC runs to depth 1,000, or their copies with one
    document listed twice (:func:`_repeat_copies`)."""
    files = sorted((out / "deep").glob("*.trec"))[:GOAL_RUNS]
    return _repeat_copies(files, out / "deep-repeat") if repeat else files


def _repeat_copies(files: list[Path], where: Path) -> list[Path]:
    """Copies of ``files`` whose second line is listed twice (one repeated document per file), written once."""
    where.mkdir(parents=True, exist_ok=True)
    out = []
    for f in files:
        path = where / f.name
        out.append(path)
        if not path.exists():
            with open(f, "rb") as src, open(path, "wb") as dst:
                first, second = src.readline(), src.readline()
                dst.write(first + second + second)
                shutil.copyfileobj(src, dst, 1 << 24)
    return out


def _linked_runs(files: list[Path], where: Path, n: int) -> list[Path]:
    """``n`` run files under ``where``, each a link to one of ``files`` in turn under its own name (the reading and
    the memory of ``n`` runs from ``len(files)`` files on disk)."""
    where.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        path = where / f"run{i:03d}.trec"
        if not path.exists():
            path.symlink_to(files[i % len(files)].resolve())
        out.append(path)
    return out


def _timed(cmd: list[str], env: dict | None = None, cwd: str | None = None) -> dict:
    """Run ``cmd`` (in ``env``, default this process's, from ``cwd``); its wall time, its own peak memory
    (``os.wait4``), exit status and output. ``python -m`` puts its working directory first on ``sys.path``, so a
    command meant for another tree's ``bayeval`` must run from that tree."""
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=os.environ if env is None else env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out_f.seek(0)
        err_f.seek(0)
        return {"wall_s": wall, "peak_mb": usage.ru_maxrss / 1024, "rc": proc.returncode,
                "stdout": out_f.read().decode(), "stderr": err_f.read().decode()}


def _cli_means(text: str, measures: list[str]) -> np.ndarray:
    """``(measures, runs)`` of the ``all`` rows of ``bayeval measures --format json`` (every digit; csv prints 6)."""
    rows = json.loads(text)
    runs = list(dict.fromkeys(r["run"] for r in rows))
    value = {(r["run"], r["measure"]): r["value"] for r in rows if r["topic"] == "all"}
    return np.array([[value[(run, m)] for run in runs] for m in measures])


# ---------------------------------------------------------------------------------------------- steps
def _step(name: str, args) -> dict:
    out = Path(args.out)
    trec = sorted((out / "deep").glob("*.trec"))
    qrels_path = out / "deep" / "qrels.txt"
    if name in ("bayeval-trec", "bayeval-msmarco"):
        from bayeval.io import read_rank_cube
        from bayeval.io.qrels import read_qrels
        from bayeval.measures.cube import evaluate_cube

        files = trec if name == "bayeval-trec" else _write_collection(out / "deep", args.queries, args.runs, 1000,
                                                                      3000, args.seed, "deep", True)
        qrels = read_qrels(qrels_path)
        cube = read_rank_cube(files, qrels, depth=1000, code_depth=0)
        t_read = time.perf_counter()
        means = evaluate_cube(cube, MEASURES).mean()
        return {"means": means.tolist(), "read_s": t_read}
    if name in ("ranx", "ranx-repeat"):
        from ranx import Qrels, Run, evaluate

        # warm: ranx compiles its numba functions on first use; compile them on the head of the first run (the
        # same reading and evaluation on the same types), untimed
        files = _goal_files(out, name.endswith("repeat"))
        head = out / "ranx-warm.trec"
        with open(files[0], "rb") as src, open(head, "wb") as dst:
            dst.writelines(src.readline() for _ in range(20_000))
        evaluate(Qrels.from_file(str(qrels_path), kind="trec"), Run.from_file(str(head), kind="trec"), RANX_METRICS,
                 make_comparable=True)
        t0 = time.perf_counter()
        qrels = Qrels.from_file(str(qrels_path), kind="trec")
        means = []
        for f in files:
            run = Run.from_file(str(f), kind="trec")
            res = evaluate(qrels, run, RANX_METRICS)
            means.append([res[m] for m in RANX_METRICS])
            del run
        return {"means": np.array(means).T.tolist(), "timed_s": time.perf_counter() - t0}
    if name == "pytrec_eval":
        import pytrec_eval

        with open(qrels_path) as fh:
            qrel = pytrec_eval.parse_qrel(fh)
        ev = pytrec_eval.RelevanceEvaluator(qrel, {"recip_rank", "ndcg_cut_10", "map", "recall_1000"})
        means = []
        for f in _goal_files(out, False):
            with open(f) as fh:
                run = pytrec_eval.parse_run(fh)
            res = ev.evaluate(run)
            means.append([float(np.mean([r[m] for r in res.values()]))
                          for m in ("recip_rank", "ndcg_cut_10", "map", "recall_1000")])
            del run, res
        return {"means": np.array(means).T.tolist()}
    if name == "hier":
        from bayeval.data.rankdata import RankData
        from bayeval.defaults import DEFAULT_MODEL
        from bayeval.io import read_qrels, read_runs
        from bayeval.relevance import estimate_probabilities

        files = sorted((out / "wide").glob("*.tsv"))[:args.runs]
        data = RankData.build(read_runs(files, run_names="file"), read_qrels(out / "wide" / "qrels.txt"))
        t_read = time.perf_counter()
        est = estimate_probabilities(data, DEFAULT_MODEL, seed=1)  # the default fit (the mode)
        t_fit = time.perf_counter() - t_read
        peak_fit = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        p_unj = float(np.mean(np.concatenate([p[~tr.judged] for p, tr in zip(est.p, data, strict=True)])))
        del est
        t0 = time.perf_counter()
        lap = estimate_probabilities(data, DEFAULT_MODEL, fit="laplace", p_draws=25, seed=1, draws=200, chains=1)
        t_lap = time.perf_counter() - t0
        return {"read_s": t_read, "fit_s": t_fit, "peak_after_fit_mb": peak_fit, "laplace_s": t_lap,
                "topics": len(data), "runs": len(data.systems), "draws": int(lap.draws[0].shape[0]),
                "mean_p_unjudged": p_unj}
    if name == "hier-pairs":
        from bayeval.data.rankcube import RankCube
        from bayeval.data.rankdata import RankData
        from bayeval.defaults import DEFAULT_MODEL
        from bayeval.expected.cube import cells_from_rankdata
        from bayeval.expected.cube_ap import expected_ap_pairs
        from bayeval.io import read_qrels, read_runs
        from bayeval.relevance import estimate_probabilities

        t0 = time.perf_counter()
        files = sorted((out / "wide").glob("*.tsv"))[:args.pair_runs]
        runs, qrels = read_runs(files, run_names="file"), read_qrels(out / "wide" / "qrels.txt")
        data = RankData.build(runs, qrels)  # for the model, and
        cube = RankCube.from_runs(runs, qrels, depth=100)  # for the pairs (every document coded: AP tells them apart)
        del runs  # both hold what they need
        t_read = time.perf_counter() - t0
        peak = {"read": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
        t0 = time.perf_counter()
        est = estimate_probabilities(data, DEFAULT_MODEL, seed=1)
        t_fit = time.perf_counter() - t0
        peak["fit"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        cells = cells_from_rankdata(cube, data, est.arrays_for("delta"))
        del est, data  # the pairs need the cube and p on it only
        t_cells = time.perf_counter() - t0
        peak["cells"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        res = expected_ap_pairs(cube, cells, method="delta")
        t_pairs = time.perf_counter() - t0
        return {"read_build_s": t_read, "fit_s": t_fit, "cube_cells_s": t_cells, "pairs_s": t_pairs,
                **{f"peak_after_{k}_mb": v for k, v in peak.items()},
                "pairs": len(res.p_less), "topics": len(cube.topics), "exact_topics": res.exact_topics,
                "calls_095": int(np.sum(np.maximum(res.p_less, 1 - res.p_less) >= 0.95))}
    if name == "pairs":
        from bayeval.expected.cube import expected_reciprocal_rank_pairs
        from bayeval.io import read_rank_cube
        from bayeval.io.qrels import read_qrels

        files = sorted((out / "wide").glob("*.tsv"))
        cube = read_rank_cube(files, read_qrels(out / "wide" / "qrels.txt"), depth=100, code_depth=10)
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
        from bayeval.data.rankdata import RankData
        from bayeval.expected import compare_systems
        from bayeval.expected.cube_measures import expected_cube_pairs
        from bayeval.io import read_rank_cube
        from bayeval.io.qrels import read_qrels
        from bayeval.io.runs import read_runs

        measure = PAIR_STEPS[name]

        def on_cube(c, **kw):  # the cube path of the step's measure (delta method where it has a method)
            return expected_cube_pairs(c, P_UNJUDGED, measure, method="delta", **kw)

        where = out / f"wide-ap{args.queries}"
        files = _write_collection(where, args.queries, args.pair_runs, 100, 300, args.seed + 1, "wide", True)
        qrels = read_qrels(where / "qrels.txt")
        t0 = time.perf_counter()
        cube = read_rank_cube(files, qrels, depth=100)  # code_depth=None: AP tells every document apart
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
        sub_cube = read_rank_cube(sub_files, sub_q, depth=100)
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

        from bayeval.expected.cube import expected_reciprocal_rank_pairs
        from bayeval.io import read_rank_cube
        from bayeval.io.qrels import read_qrels

        files = sorted((out / "wide").glob("*.tsv"))
        cube = read_rank_cube(files, read_qrels(out / "wide" / "qrels.txt"), depth=100, code_depth=10)
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
    """A step in its own process: its JSON result, wall time and peak memory."""
    cmd = [sys.executable, __file__, "--step", name, "--out", args.out, "--runs", str(args.runs), "--pair-runs",
           str(args.pair_runs), "--queries", str(args.queries), "--seed", str(args.seed)]
    r = _timed(cmd)
    if r["rc"]:
        return {"error": r["stderr"].strip().splitlines()[-1] if r["stderr"].strip() else "failed"}
    res = json.loads(r["stdout"].strip().splitlines()[-1])
    res.update(wall_s=r["wall_s"], process_peak_mb=r["peak_mb"])
    return res


def _measures_cli(qrels: Path, files: list[Path]) -> dict:
    """``bayeval measures`` as a user runs it (the whole command, imports included)."""
    r = _timed([sys.executable, "-m", "bayeval.cli", "measures", str(qrels), *map(str, files), "-m", CLI_MEASURES,
                "--format", "json"])
    if r["rc"]:
        return {"error": r["stderr"].strip().splitlines()[-1]}
    names = ["RR@10", "nDCG@10", "AP", "recall@1000"]  # the canonical names of CLI_MEASURES, in its order
    return {"wall_s": r["wall_s"], "peak_mb": r["peak_mb"], "means": _cli_means(r["stdout"], names)}


def _goal(text: str, ok: bool) -> None:
    print(f"  goal {text}: {'met' if ok else 'MISSED'}", flush=True)


def _goal_measures(out: Path, quick: bool) -> None:
    """Goal: 4 runs × 6,980 × 1,000 through ``bayeval measures``, wall ≤ 0.8 × warm ranx, peak ≤ ranx's; again with
    one repeated document per file."""
    qrels = out / "deep" / "qrels.txt"
    for repeat in (False, True):
        files = _goal_files(out, repeat)
        tag = " (one repeated document per file)" if repeat else ""
        ours = _measures_cli(qrels, files)
        ranx = _run_step("ranx-repeat" if repeat else "ranx", ARGS)
        if "error" in ours or "error" in ranx:
            print(f"measures{tag}: not run ({ours.get('error') or ranx.get('error')})")
            continue
        print(f"measures, {len(files)} runs × {ARGS.queries} × 1000{tag}: bayeval measures {ours['wall_s']:.1f} s, "
              f"peak {ours['peak_mb']:.0f} MB; ranx warm {ranx['timed_s']:.1f} s (process {ranx['wall_s']:.1f} s), "
              f"peak {ranx['process_peak_mb']:.0f} MB; ratio {ours['wall_s'] / ranx['timed_s']:.3f}", flush=True)
        diff = float(np.abs(ours["means"] - np.array(ranx["means"])).max())
        print(f"  largest |bayeval - ranx| of a run's mean: {diff:.1e}")
        if not repeat and not quick:
            pte = _run_step("pytrec_eval", ARGS)
            if "error" not in pte:
                d = float(np.abs(ours["means"][1:] - np.array(pte["means"])[1:]).max())
                print(f"  pytrec_eval {pte['wall_s']:.1f} s, peak {pte['process_peak_mb']:.0f} MB (ratio bayeval / "
                      f"pytrec_eval {ours['wall_s'] / pte['wall_s']:.3f}); largest difference (nDCG@10, AP, R@1000) "
                      f"{d:.1e}")
        _goal(f"wall ≤ 0.8 × warm ranx{tag}", ours["wall_s"] <= 0.8 * ranx["timed_s"])
        _goal(f"peak ≤ ranx's{tag}", ours["peak_mb"] <= ranx["process_peak_mb"])


def _goal_trec8(work: Path, baseline: str | None) -> None:
    """Goal: all TREC-8 pairs with the default model fitted ≤ 6 s; with a probabilities file ≤ 3.5 s. The command is
    ``bayeval evaluate QRELS RUNS --pairs --depth 100 --method delta`` (the setting of the 14.5 s and 3.5 s the goal
    was set from); with ``--baseline TREE`` the same commands of that tree run in turn with this one's."""
    d = DATA / "trec8"
    if not (d / "qrels.txt.gz").exists():
        print(f"evaluate-trec8: not run ({d} missing)")
        return
    base = ["evaluate", str(d / "qrels.txt.gz"), str(d / "runs"), "--pairs", "--depth", "100", "--method", "delta",
            "--format", "csv"]
    probs = work / "trec8-probabilities.txt"
    if not probs.exists():
        work.mkdir(parents=True, exist_ok=True)
        _timed([sys.executable, "-m", "bayeval.cli", "estimate", str(d / "qrels.txt.gz"), str(d / "runs"),
                "--depth", "100", "--out", str(probs)])
    trees = [("this tree", str(ROOT))] + ([("baseline", baseline)] if baseline else [])
    for what, extra, limit in (("the default model fitted", [], 6.0),
                               ("a probabilities file", ["--probabilities", str(probs)], 3.5)):
        for label, tree in trees:
            r = _timed([sys.executable, "-m", "bayeval.cli", *base, *extra], dict(os.environ, PYTHONPATH=tree),
                       cwd=tree)
            if r["rc"]:
                print(f"evaluate-trec8 ({what}, {label}): failed: {r['stderr'].strip().splitlines()[-1]}")
                continue
            pairs = sum(1 for line in r["stdout"].splitlines()[1:] if line.split(",")[1])
            print(f"evaluate, TREC-8 129 runs, {pairs} pairs, {what} ({label}): {r['wall_s']:.1f} s, "
                  f"peak {r['peak_mb']:.0f} MB", flush=True)
            if label == "this tree":
                _goal(f"TREC-8 all pairs, {what}: ≤ {limit} s", r["wall_s"] <= limit)


def _goal_steps() -> None:
    """Goals: the default model at 10 runs × 6,980 (≤ 60 s, ≤ 6 GB); ΔMAP of all pairs of 100 runs × 6,980 with it
    (≤ 120 s, ≤ 8 GB)."""
    r = _run_step("hier", ARGS)
    if "error" in r:
        print(f"hier: not run ({r['error']})")
    else:
        print(f"default model, {r['runs']} runs × {r['topics']} queries (depth 100): fit {r['fit_s']:.1f} s "
              f"(read {r['read_s']:.1f} s), peak {r['process_peak_mb']:.0f} MB; Laplace with {r['draws']} posterior "
              f"draws of p {r['laplace_s']:.1f} s", flush=True)
        _goal("default model fit, 10 runs: ≤ 60 s, ≤ 6 GB", r["fit_s"] <= 60 and r["process_peak_mb"] <= 6144)
    r = _run_step("hier-pairs", ARGS)
    if "error" in r:
        print(f"hier-pairs: not run ({r['error']})")
        return
    print(f"ΔMAP, {r['pairs']} pairs × {r['topics']} queries with the default model: {r['wall_s']:.1f} s in all "
          f"(read, align and cube {r['read_build_s']:.1f} s, fit {r['fit_s']:.1f} s, p on the cube "
          f"{r['cube_cells_s']:.1f} s, pairs {r['pairs_s']:.1f} s), peak {r['process_peak_mb']:.0f} MB (after reading "
          f"{r['peak_after_read_mb']:.0f}, fitting {r['peak_after_fit_mb']:.0f}); calls at ≥ 0.95: {r['calls_095']}",
          flush=True)
    _goal("ΔMAP of all pairs of 100 runs with the default model: ≤ 120 s, ≤ 8 GB",
          r["wall_s"] <= 120 and r["process_peak_mb"] <= 8192)


def _goal_measures_100(out: Path) -> None:
    """Goal: ``bayeval measures`` on 100 runs × 6,980 × 1,000 within 6 GB."""
    files = _linked_runs(sorted((out / "deep").glob("*.trec")), out / "deep100", 100)
    r = _measures_cli(out / "deep" / "qrels.txt", files)
    if "error" in r:
        print(f"measures-100: not run ({r['error']})")
        return
    print(f"measures, 100 runs × {ARGS.queries} × 1000: {r['wall_s']:.1f} s, peak {r['peak_mb']:.0f} MB", flush=True)
    _goal("100 runs × 6,980 × 1,000 measures: ≤ 6 GB", r["peak_mb"] <= 6144)


ARGS = None


def main() -> None:
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/bayeval-scale")
    ap.add_argument("--queries", type=int, default=6980)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--pair-runs", type=int, default=100)
    ap.add_argument("--ref-queries", type=int, default=100,
                    help="pairs-ap: queries on which the per-topic compare_systems reference runs (default 100)")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--quick", action="store_true", help="skip pytrec_eval and the 100-run measures")
    ap.add_argument("--goals", default="measures,trec8,hier,measures-100",
                    help="which goals to run (default all: measures,trec8,hier,measures-100)")
    ap.add_argument("--dask", action="store_true", help="pairs-ap/-ndcg/-recall: also on a 2-worker Dask LocalCluster")
    ap.add_argument("--baseline", help="trec8 goal: a source tree with an older bayeval/ (and models/) to run in turn")
    ap.add_argument("--step", help=argparse.SUPPRESS)
    ARGS = args = ap.parse_args()
    goals = {g.strip() for g in args.goals.split(",")}
    if goals - GOALS:
        ap.error(f"--goals: unknown {', '.join(sorted(goals - GOALS))}; one or more of {', '.join(sorted(GOALS))}")
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
    _write_collection(out / "wide", args.queries, args.pair_runs, 100, 300, args.seed + 1, "wide", True)
    print(f"collection written to {out} in {time.perf_counter() - t0:.0f} s ({args.queries} queries; {args.runs} "
          f"runs × 1000; {args.pair_runs} runs × 100); load average {os.getloadavg()[0]:.1f}", flush=True)
    if "measures" in goals:
        _goal_measures(out, args.quick)
    if "trec8" in goals:
        _goal_trec8(out / "trec8", args.baseline)
    if "hier" in goals:
        _goal_steps()
    if "measures-100" in goals and not args.quick:
        _goal_measures_100(out)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
