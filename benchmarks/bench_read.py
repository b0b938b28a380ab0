"""Reading at MS MARCO scale, before and after: the same files read by two source trees, one after the other.

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
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


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
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
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
