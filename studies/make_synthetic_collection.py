"""Write a synthetic collection in the layout of ../shared/data (``runs/input.<tag>``, ``qrels.txt``, ``runs.tsv``).

The robustness studies (studies/calibration_study.py, ``bayeval experiment robustness run``) read a
collection directory; this writes one from :func:`bayeval.synthetic.make_collection`, whose truth is known.
``runs.tsv`` marks the systems drawn with ``--independent`` (they do not share the document effect, as TREC's
manual runs find what the others miss) as ``manual``, so the tables split pairs by them as they split TREC-8's.

Usage (the collection docs/calibration.md chose on)::

    python studies/make_synthetic_collection.py synth-ind --topics 50 --systems 30 --docs 1000 \\
        --base-rate 0.05 --independent 8 --seed 11

``--manual M`` draws M *manual-like* systems instead (a quality bonus ``--manual-quality`` and their own
document effect; runs.tsv marks them ``manual`` too), and ``--hidden h`` hides a share h of the relevant
documents from the shared document effect (moved by ``--hidden-effect``), each manual-like system seeing a
hidden document with probability ``--hidden-reach`` (:func:`bayeval.synthetic.make_collection`). The recipe
``synth-manual`` (docs/notes/calibration-record.md, "A choosing collection with manual-like runs"), whose parameters
were picked by the qualitative signature of TREC's manual runs only (many unique relevant documents; under reuse a
manual run's E[MAP] below its MAP and an automatic run's above; manual pairs less often right at ≥ 0.99;
``--truth pool``: as TREC-8's qrels, the truth judges only what some run retrieves)::

    python studies/make_synthetic_collection.py synth-manual --topics 50 --systems 30 --docs 1000 \\
        --base-rate 0.05 --independent 0 --manual 6 --manual-quality 1.0 --hidden 0.4 --hidden-effect -4 \\
        --hidden-reach 0.25 --truth pool --seed 11

``--dense`` starts from the small, dense pools of :data:`bayeval.synthetic.DENSE_SHALLOW` (200 documents a
topic, all in the depth-100 pool of 30 systems, 40% relevant, graded; the flags given override it): the
choosing collection of docs/sampling.md for samples of 10-40 judgments a topic::

    python studies/make_synthetic_collection.py synth-dense --dense --independent 0 --seed 21

The pair figures on it depend on the draw of systems (docs/notes/calibration-record.md, "A choosing collection
with manual-like runs", "Across seeds"): choose on ``--seed 11``, ``12`` and ``13`` together.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bayeval.data import pool_qrels
from bayeval.errors import BayevalInputError
from bayeval.io import write_qrels, write_run
from bayeval.synthetic import DENSE_SHALLOW, make_collection


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path, help="new directory")
    ap.add_argument("--dense", action="store_true",
                    help="start from bayeval.synthetic.DENSE_SHALLOW (small, dense, graded pools) instead")
    ap.add_argument("--topics", type=int, default=None, help="default 50")
    ap.add_argument("--systems", type=int, default=None, help="default 30")
    ap.add_argument("--docs", type=int, default=None, help="default 1000 (--dense: 200)")
    ap.add_argument("--depth", type=int, default=None, help="default 100")
    ap.add_argument("--base-rate", type=float, default=None, help="default 0.05 (--dense: 0.4)")
    ap.add_argument("--independent", type=int, default=8)
    ap.add_argument("--manual", type=int, default=0,
                    help="manual-like systems: a quality bonus and their own document effect (runs.tsv 'manual')")
    ap.add_argument("--manual-quality", type=float, default=0.5, help="quality bonus of a manual-like system")
    ap.add_argument("--hidden", type=float, default=0.0,
                    help="probability that a relevant document is hidden from the shared document effect")
    ap.add_argument("--hidden-effect", type=float, default=-2.0, help="shift of a hidden document's shared effect")
    ap.add_argument("--hidden-reach", type=float, default=1.0,
                    help="probability that a manual-like system sees a given hidden document")
    ap.add_argument("--truth", choices=("complete", "pool"), default="complete",
                    help="qrels.txt: every document of every topic judged (default), or only the documents some "
                         "run retrieves (TREC's truth: a pool of every run at --depth)")
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args(argv)
    start = dict(DENSE_SHALLOW) if a.dense else {"n_topics": 50, "n_systems": 30, "n_docs": 1000, "depth": 100,
                                                  "base_rate": 0.05}
    given = {"n_topics": a.topics, "n_systems": a.systems, "n_docs": a.docs, "depth": a.depth,
             "base_rate": a.base_rate}
    start.update({k: v for k, v in given.items() if v is not None})
    a.depth = start["depth"]
    try:
        col = make_collection(**start, seed=a.seed, independent=a.independent, manual=a.manual,
                              manual_quality=a.manual_quality, hidden=a.hidden, hidden_effect=a.hidden_effect,
                              hidden_reach=a.hidden_reach)
        (a.out / "runs").mkdir(parents=True)
    except (BayevalInputError, OSError) as exc:
        sys.exit(f"make_synthetic_collection.py: {exc}")
    for run in col.runs:
        write_run(run, a.out / "runs" / f"input.{run.name}")
    write_qrels(col.qrels if a.truth == "complete" else pool_qrels(col.runs, col.qrels, a.depth), a.out / "qrels.txt")
    marked = set(col.independent) | set(col.manual)
    rows = [f"{r.name}\tsynthetic\t{'manual' if r.name in marked else 'automatic'}" for r in col.runs]
    (a.out / "runs.tsv").write_text("run\tgroup\ttype\n" + "\n".join(rows) + "\n")
    print(f"{a.out}: {col}; independent: {', '.join(col.independent) or 'none'}; manual-like: "
          f"{', '.join(col.manual) or 'none'} (both runs.tsv 'manual')")


if __name__ == "__main__":
    main()
