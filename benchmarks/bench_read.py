"""Reading at MS MARCO scale: a file with one repeated document against a clean one (``--repeat``), and before
and after (the same files read by two source trees, one after the other).

``--repeat``: writes a run of ``--queries`` × ``--depth`` lines (TREC layout, and with ``--layout msmarco`` the
MS MARCO one) to ``--out``/repeat, the same run with one document listed twice, and the repeated run with one line
separated by tabs instead of spaces (a file the Arrow path leaves to the careful line-by-line parser: what the
repeated run cost before the Arrow path kept it, docs/benchmarks.md). It reads the three with
:func:`bayeval.io.read_run`, alternately, ``--times`` rounds, and prints the best wall and CPU time of each and the
ratios repeated / clean and careful / repeated, measured in the same run:

    python benchmarks/bench_read.py --repeat --out /tmp/bayeval-read --queries 6980 --depth 1000

Before and after:

Reads the 10 runs × 6,980 queries × depth 1,000 of ``bench_scale.py``'s collection (``--out``/deep, TREC or MS
MARCO layout) into a :class:`~bayeval.data.rankcube.RankCube` and computes RR@10, nDCG@10, AP and recall@1000
(:func:`~bayeval.measures.cube.evaluate_cube`), as the ``bayeval-trec`` / ``bayeval-msmarco`` steps of
``bench_scale.py`` do, once with this tree and once with ``--baseline`` (a source tree holding an older
``bayeval/`` package, e.g. ``git archive <commit> bayeval | tar -x -C DIR``), each in its own process. It prints
per tree the wall time, the CPU time (user + sys of the process, ``resource.getrusage``: less sensitive to the
load of a shared machine than the wall time), the peak memory, the machine's load average before each, the
ratio new / baseline, and the largest difference between the two trees' means.

    python benchmarks/bench_scale.py --out /tmp/bayeval-scale --quick   # writes the collection (or see below)
    python benchmarks/bench_read.py --out /tmp/bayeval-scale --baseline /tmp/base --layout trec
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _write_runs(out: Path, queries: int, depth: int, layout: str) -> tuple[Path, Path, Path]:
    """The clean run, the run with one document listed twice (query 0's document at rank 2 again, last in its
    list), and that run with one line separated by tabs (the careful parser's file). Written once, then reused."""
    out.mkdir(parents=True, exist_ok=True)
    ext = "trec" if layout == "trec" else "tsv"
    paths = tuple(out / f"{name}-{queries}x{depth}.{ext}" for name in ("clean", "repeat", "careful"))
    if all(p.exists() for p in paths):
        return paths
    rng = np.random.default_rng(0)
    with open(paths[0], "w") as clean, open(paths[1], "w") as rep, open(paths[2], "w") as careful:
        for q in range(queries):
            docs = rng.choice(8_800_000, depth, replace=False)
            scores = np.sort(rng.normal(10, 3, depth))[::-1]
            if layout == "trec":
                lines = [f"{q + 1} Q0 D{d} {r + 1} {s:.4f} bench\n"
                         for r, (d, s) in enumerate(zip(docs, scores, strict=True))]
                extra = f"{q + 1} Q0 D{docs[1]} {depth + 1} {scores[-1] - 1:.4f} bench\n"
                tabbed = lines[0].replace(" ", "\t")
            else:
                lines = [f"{q + 1}\tD{d}\t{r + 1}\n" for r, d in enumerate(docs)]
                extra = f"{q + 1}\tD{docs[1]}\t{depth + 1}\n"
                tabbed = lines[0].replace("\t", " ", 1)
            text = "".join(lines)
            clean.write(text)
            rep.write(text + (extra if q == 0 else ""))
            careful.write((tabbed + "".join(lines[1:]) if q == 0 else text) + (extra if q == 0 else ""))
    return paths


def _repeat(args) -> None:
    from bayeval.io import read_run

    paths = _write_runs(Path(args.out) / "repeat", args.queries, args.depth, args.layout)
    labels = ("clean file", "one repeated document", "careful parser (the same file, one line tab-separated)")
    best = {label: (np.inf, np.inf) for label in labels}
    rankings = {}
    for k in range(args.times):
        turn = [(labels[(i + k) % 3], paths[(i + k) % 3]) for i in range(3)]  # each file first in one round
        for label, path in turn:
            w0, c0 = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run = read_run(path)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            best[label] = (min(best[label][0], wall), min(best[label][1], cpu))
            rankings[label] = (run.ranking(run.topics[0]).tolist(), len(run.docno_array))
            del run
    print(f"{args.queries} queries x {args.depth} ({args.layout}), best of {args.times}, load average "
          f"{os.getloadavg()[0]:.1f}:")
    for label in labels:
        print(f"  {label:56s} {best[label][0]:7.2f} s wall {best[label][1]:7.2f} s CPU")
    (cw, cc), (rw, rc), (kw, kc) = (best[label] for label in labels)
    print(f"ratio repeated / clean: wall {rw / cw:.2f}, CPU {rc / cc:.2f}; careful / repeated: wall {kw / rw:.1f}, "
          f"CPU {kc / rc:.1f}")
    same = rankings[labels[1]] == rankings[labels[2]] and rankings[labels[1]][1] == rankings[labels[0]][1]
    print(f"same rows from the Arrow path and the careful parser: {same}")


def _one(out: str, layout: str, runs: int) -> dict:
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    import bayeval.io
    from bayeval.io.qrels import read_qrels
    from bayeval.measures.cube import evaluate_cube

    files = sorted((Path(out) / "deep").glob(f"*.{'trec' if layout == 'trec' else 'tsv'}"))[:runs]
    qrels = read_qrels(Path(out) / "deep" / "qrels.txt")
    if hasattr(bayeval.io, "read_rank_cube"):
        cube = bayeval.io.read_rank_cube(files, qrels, depth=1000, code_depth=0)
    else:  # a baseline tree from before the cube's reader moved to io/
        from bayeval.data.rankcube import RankCube

        cube = RankCube.from_files(files, qrels, depth=1000, code_depth=0)
    t_read = time.perf_counter() - t0
    means = evaluate_cube(cube, "RR@10,nDCG@10,AP,recall@1000").mean()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return {"seconds": time.perf_counter() - t0, "read_s": t_read, "runs": len(files),
            "cpu_s": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), "peak_mb": r1.ru_maxrss / 1024,
            "means": means.tolist()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/tmp/bayeval-scale", help="bench_scale.py's collection directory")
    ap.add_argument("--baseline", help="a source tree with the bayeval package to compare with")
    ap.add_argument("--layout", choices=("trec", "msmarco"), default="trec")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--repeat", action="store_true", help="a file with one repeated document against a clean one")
    ap.add_argument("--queries", type=int, default=6980, help="--repeat: queries of the generated run")
    ap.add_argument("--depth", type=int, default=1000, help="--repeat: documents per query")
    ap.add_argument("--times", type=int, default=3, help="--repeat: rounds (best of), each file first in one")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.repeat:
        _repeat(args)
        return
    if args.child:
        print(json.dumps(_one(args.out, args.layout, args.runs)))
        return
    trees = [("this tree", str(ROOT))] + ([("baseline", args.baseline)] if args.baseline else [])
    res = {}
    for label, tree in trees:
        load = os.getloadavg()[0]
        env = dict(os.environ, PYTHONPATH=tree)
        proc = subprocess.run([sys.executable, __file__, "--child", "--out", args.out, "--layout", args.layout,
                               "--runs", str(args.runs)], capture_output=True, text=True, env=env, cwd=tree)
        if proc.returncode:
            raise SystemExit(f"{label}: {proc.stderr.strip().splitlines()[-1]}")
        res[label] = r = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{label:10s} {r['runs']} runs ({args.layout}): {r['seconds']:6.1f} s wall (read {r['read_s']:.1f} s), "
              f"{r['cpu_s']:6.1f} s CPU, peak {r['peak_mb']:5.0f} MB; load average before {load:.1f}", flush=True)
    if len(res) == 2:
        a, b = res["this tree"], res["baseline"]
        diff = float(np.abs(np.array(a["means"]) - np.array(b["means"])).max())
        print(f"ratio this / baseline: wall {a['seconds'] / b['seconds']:.3f}, CPU {a['cpu_s'] / b['cpu_s']:.3f}; "
              f"largest difference of the means {diff:.1e}")


if __name__ == "__main__":
    main()
