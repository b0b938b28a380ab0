"""Shared fixtures. ``shared_data`` locates ../shared/data beside the repository, or skips."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

_SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"  # <repo>/../shared/data


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path of ``../shared/data`` (TREC-8, Robust 2003, Cranfield); skips the test when absent."""
    if not (_SHARED_DATA / "trec8").is_dir():
        pytest.skip(f"real data not found at {_SHARED_DATA}")
    return _SHARED_DATA


@pytest.fixture
def on_local_dask():
    """``run(collection, config, trials)``: a study on a one-worker Dask LocalCluster (skips without distributed)."""
    distributed = pytest.importorskip("distributed")
    from bayeval.experiments import run_study

    def run(collection, config, trials):
        with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                      dashboard_address=None) as cluster:
            return run_study(collection, config, trials, scheduler=cluster.scheduler_address, progress=False)
    return run


def write_collection_dir(col, root: Path) -> Path:
    """Write a synthetic collection in the layout of ../shared/data: ``runs/input.<tag>`` and ``qrels.txt``."""
    from bayeval.io import write_qrels, write_run

    (root / "runs").mkdir()
    for run in col.runs:
        write_run(run, root / "runs" / f"input.{run.name}")
    write_qrels(col.qrels, root / "qrels.txt")
    return root


@pytest.fixture(scope="session")
def collection_dir_writer():
    """:func:`write_collection_dir` for fixtures of test modules."""
    return write_collection_dir


def run_cli(*argv) -> tuple[int, str, str]:
    """``bayeval ARGV...`` in this process: exit code (argparse usage errors included), stdout, stderr.

    Test modules import it (``from conftest import run_cli``): pytest puts tests/ on ``sys.path``.
    """
    from bayeval.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse usage errors
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()
