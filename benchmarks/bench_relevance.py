"""Speed of the relevance models on TREC-8, each against a reference timed in the same run.

A. Fast-path RTC fit (rank coefficients → Platt calibration → expert aggregation, MAP by Newton/IRLS in
   numpy) on all 129 runs × 50 topics at depth 100 with the official judgments, then p for every
   document. Goal ≤ 2 s. Reference: ``pm.find_MAP`` (L-BFGS on PyMC's log posterior) on the *same* three
   models, each given the previous stage's fast-path estimate, with and without PyMC's compilation; the
   largest parameter difference between the two shows they solve the same problem.
B. NUTS on the expert-aggregation model of the 10-run held-out protocol (depth-10 pool of all 129 runs as
   judgments, the ten runs of ``TREC8_SYSTEMS`` in studies/relevance_heldout.py at depth 100; ``rtc-default``):
   4 chains × 1000 tuning + 1000 draws.
   Goal ≤ 5 minutes with r-hat < 1.01. Reference: the fast path's MAP and Laplace fits of the same model.

C. The default model's fit (MAP, then p for every document) with an automatic assessor's labels against the same
   fit without them, on the synthetic default collection (``make_collection()``) and on DL 2020 (59 runs, depth
   100, official qrels): labels of every document the runs retrieve, simulated from the truth (the synthetic
   collection's complete qrels; DL 2020's qrels, an unjudged document counted as not relevant) with RAG 2025's
   pooled confusion. With labels: the map learned, and 200 draws of p made (the map's uncertainty). Goal: ratio ≤ 2.

Times are the best of ``--repeat`` runs (the machine is shared); the first, cold call is printed too.

Usage::

    python benchmarks/bench_relevance.py [--data PATH] [--repeat 5] [--skip-find-map] [--skip-nuts] [--cores 2]
    python benchmarks/bench_relevance.py --labels-only [--dl20 PATH]   # C alone
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from bayeval.data import AssessorLabels, RankData
from bayeval.io import read_qrels, read_runs
from bayeval.relevance import RTCEstimator, estimate_probabilities, shallow_pool_split
from bayeval.synthetic import make_collection

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8"
DL20 = Path(__file__).resolve().parents[2] / "shared" / "data" / "dl20-passage"
#: RAG 2025's pooled P(LLM grade | human grade < 2) and P(LLM grade | human grade >= 2), grades 0-4
#: (../shared/data/rag25-labels/README.md's confusion table)
RAG25_NONREL = np.array([2038, 1520, 1247, 263, 50], dtype=float)
RAG25_REL = np.array([486, 879, 2543, 1000, 258], dtype=float)
TREC8_SYSTEMS = ("INQ601", "INQ602", "Sab8A1", "Sab8A2", "ok8alx", "ok8amxc", "pir9Aatd", "weaver1", "att99atde",
                 "fub99a")


def _best(f, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), times[0], out


def fast_path(data: RankData, config: str, repeat: int):
    def run():
        fit = RTCEstimator(config).fit(data, "map")
        return fit, fit.probabilities()
    best, first, (fit, est) = _best(run, repeat)
    n_unj = sum(int((~j).sum()) for j in est.judged)
    print(f"| fast path, {config}: fit + p of {n_unj:,} unjudged docs | {best:.2f} s (cold {first:.2f} s) | "
          f"Newton iterations {fit.rank.mode.n_iter}/{fit.calibration.mode.n_iter}/{fit.aggregation.mode.n_iter} |")
    return best, fit


def find_map_reference(fit) -> float:
    import pymc as pm

    total, total_compiled, worst = 0.0, 0.0, 0.0
    for stage in ("rank", "calibration", "aggregation"):
        model = fit.models[stage]
        t0 = time.perf_counter()
        pmm = model.build_model()
        logp = pmm.compile_logp(jacobian=False)
        dlogp = pmm.compile_dlogp(jacobian=False)
        t1 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fm = pm.find_MAP(model=pmm, progressbar=False, maxeval=50_000)
        t2 = time.perf_counter()
        got = model.param_spec.flatten({n: fm[n] for n in model.param_spec.names})
        mode = fit.fits[stage].mode.x
        diff = float(np.max(np.abs(got - mode)))
        pt = model.param_spec.unflatten(mode)
        gap = float(logp(pt) - logp(model.param_spec.unflatten(got)))
        gmax = float(np.max(np.abs(dlogp(pt))))
        worst = max(worst, diff)
        total += t2 - t0
        total_compiled += t2 - t1
        print(f"| pm.find_MAP, {stage} ({model.param_spec.size:,} parameters) | {t2 - t0:.2f} s "
              f"(optimisation alone {t2 - t1:.2f} s) | max abs diff from fast path {diff:.1e}; "
              f"log post. at fast path − at find_MAP {gap:.1e}; |PyMC gradient| at fast path {gmax:.1e} |")
    _ = logp, dlogp
    return total, total_compiled, worst


def nuts(trec8: Path, runs, qrels, cores: int, repeat: int) -> None:
    split = shallow_pool_split(runs, qrels, TREC8_SYSTEMS, judged_depth=10, depth=100)
    fit = RTCEstimator("rtc-default").fit(split.data, "map")
    agg = fit.models["aggregation"]
    t_map, _, f_map = _best(lambda: agg.fit("map"), repeat)
    t_lap, _, f_lap = _best(lambda: agg.fit("laplace", draws=1000, chains=4, seed=1), repeat)
    t0 = time.perf_counter()
    f = agg.fit("mcmc", draws=1000, tune=1000, chains=4, cores=cores, seed=1)
    t_nuts = time.perf_counter() - t0
    rhat, ess = f.rhat(), f.ess()
    flat, sd = f.flat_draws(), f_map.mode.sd()
    dev = np.max(np.abs(flat.mean(0) - f_map.mode.x) / sd)
    sd_ratio = flat.std(0) / sd
    lap_dev = np.max(np.abs(f_lap.flat_draws().mean(0) - flat.mean(0)) / sd)
    print(f"\nB. NUTS, expert aggregation of the 10-run protocol: {agg.X.shape[0]:,} judged documents × "
          f"{agg.X.shape[1]} experts, 4 chains × (1000 tune + 1000 draws), cores={cores}\n")
    print("| what | time | ratio | notes |")
    print("|---|---|---|---|")
    print(f"| NUTS (build + compile + sample) | {t_nuts:.1f} s | {t_nuts / t_map:,.0f}× the MAP | max r-hat "
          f"{rhat.max():.4f}, min bulk ESS {ess.min():.0f}, divergences {f.divergences()} |")
    print(f"| fast-path MAP (reference) | {t_map * 1e3:.1f} ms | 1 | |")
    print(f"| Laplace, 4000 draws (reference) | {t_lap * 1e3:.1f} ms | {t_lap / t_map:.1f}× | "
          f"max |Laplace mean − NUTS mean| = {lap_dev:.3f} posterior sd |")
    print(f"\nNUTS posterior means within {dev:.3f} posterior sd of the MAP; NUTS sd / Laplace sd in "
          f"[{sd_ratio.min():.3f}, {sd_ratio.max():.3f}]. Goal ≤ 300 s with r-hat < 1.01: "
          f"{'met' if t_nuts <= 300 and rhat.max() < 1.01 else 'NOT met'}.")


def simulated_labels(data: RankData, truth, seed: int = 0) -> AssessorLabels:
    """An assessor's grade of every document of ``data``, drawn from RAG 2025's pooled confusion given ``truth``
    (a Qrels; an unjudged document counts as not relevant)."""
    rng = np.random.default_rng(seed)
    p0, p1 = RAG25_NONREL / RAG25_NONREL.sum(), RAG25_REL / RAG25_REL.sum()
    out = {}
    for tr in data:
        rel = np.zeros(tr.n_docs, bool)
        if tr.topic in truth.topic_judgments:
            tj = truth[tr.topic]
            good = set(tj.docnos[tj.grades >= truth.relevance_level].tolist())
            rel = np.fromiter((d in good for d in tr.docnos), bool, tr.n_docs)
        g = np.where(rel, rng.choice(5, size=tr.n_docs, p=p1), rng.choice(5, size=tr.n_docs, p=p0))
        out[tr.topic] = (tr.docnos, g.astype(float))
    return AssessorLabels("llm", "grades", out)


def labels_ratio(name: str, data: RankData, labels: AssessorLabels, repeat: int) -> float:
    """Best-of-``repeat`` times of the default model's fit without and with ``labels``; prints a table row."""
    base, base_cold, _ = _best(lambda: estimate_probabilities(data, p_draws=200, seed=0), repeat)
    withl, with_cold, est = _best(lambda: estimate_probabilities(data, p_draws=200, seed=0, labels=[labels]), repeat)
    n = sum(int((~tr.judged).sum()) for tr in data)
    print(f"| {name}: {len(data.systems)} runs × {len(data)} topics, {n:,} unjudged documents labelled | "
          f"{base:.2f} s (cold {base_cold:.2f} s) | {withl:.2f} s (cold {with_cold:.2f} s) | {withl / base:.2f}× |")
    return withl / base


def labels_case(dl20: Path, repeat: int) -> None:
    print("\nC. The default model's fit with an automatic assessor's labels (map learned, 200 draws of p) against "
          "without\n")
    print("| collection | without labels | with labels | ratio |")
    print("|---|---|---|---|")
    col = make_collection()
    data = RankData.build(col.runs, col.judgments)
    ratios = [labels_ratio("synthetic default", data, simulated_labels(data, col.qrels), repeat)]
    if (dl20 / "qrels.txt.gz").exists():
        qrels = read_qrels(dl20 / "qrels.txt.gz")
        data = RankData.build(read_runs(sorted((dl20 / "runs").glob("*.gz"))), qrels, depth=100)
        ratios.append(labels_ratio("DL 2020", data, simulated_labels(data, qrels), repeat))
    print(f"\nGoal ratio ≤ 2: {'met' if max(ratios) <= 2.0 else 'NOT met'} (at most {max(ratios):.2f}×).")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the trec8/ directory")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cores", type=int, default=2, help="processes for the NUTS chains")
    ap.add_argument("--skip-find-map", action="store_true")
    ap.add_argument("--skip-nuts", action="store_true")
    ap.add_argument("--dl20", type=Path, default=DL20, help="the dl20-passage/ directory (case C)")
    ap.add_argument("--labels-only", action="store_true", help="case C alone")
    args = ap.parse_args(argv)
    if args.labels_only:
        labels_case(args.dl20, args.repeat)
        return 0
    t0 = time.perf_counter()
    qrels = read_qrels(args.data / "qrels.txt.gz")
    runs = read_runs(sorted((args.data / "runs").glob("input.*.gz")))
    t_read = time.perf_counter() - t0
    t0 = time.perf_counter()
    data = RankData.build(runs, qrels, depth=100)
    t_build = time.perf_counter() - t0
    print(f"A. Fast-path RTC, {len(data.systems)} runs × {len(data)} topics at depth 100, official qrels "
          f"(reading {t_read:.1f} s and building the rank data {t_build:.2f} s not included)\n")
    print("| what | time | notes |")
    print("|---|---|---|")
    best, fit = fast_path(data, "rtc-default", args.repeat)
    fast_path(data, "rtc-mtc", args.repeat)
    if not args.skip_find_map:
        total, opt, worst = find_map_reference(fit)
        print(f"| pm.find_MAP, three stages | {total:.2f} s (optimisation alone {opt:.2f} s) | "
              f"{total / best:.0f}× ({opt / best:.0f}× without compilation) the fast path; max abs diff {worst:.1e} |")
    print(f"\nGoal ≤ 2 s: {'met' if best <= 2.0 else 'NOT met'} ({best:.2f} s).")
    if not args.skip_nuts:
        nuts(args.data, runs, qrels, args.cores, args.repeat)
    labels_case(args.dl20, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
