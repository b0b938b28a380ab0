"""Shared fixtures. ``shared_data`` locates ../shared/data beside the repository, or skips; every test must leave
no process behind (:func:`no_process_left_behind`)."""

from __future__ import annotations

import io
import os
import signal
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest

_SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"  # <repo>/../shared/data
_STUDY_MODELS = Path(__file__).resolve().parents[1] / "studies" / "models"


def study_model(name: str) -> str:
    """The path of a study's model configuration (``studies/models/<name>.toml``: not shipped, loaded by path)."""
    return str(_STUDY_MODELS / f"{name}.toml")


#: Helpers an interpreter keeps for its lifetime and ends itself at exit: not "left behind" by a test.
_LIFETIME_HELPERS = ("multiprocessing.resource_tracker", "multiprocessing.semaphore_tracker", "loky", "joblib")


def group_processes() -> dict[int, str]:
    """``{pid: command line}`` of the live processes of this process group other than this one (Linux ``/proc``;
    empty elsewhere). A process a test starts joins the group, and stays in it when it outlives its parent: the
    ``judge serve`` a test forgot to stop shows up here with parent 1."""
    me, group, out = os.getpid(), os.getpgrp(), {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            if fields[0] == b"Z" or int(fields[2]) != group:  # state, ppid, pgrp: zombies are gone already
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, IndexError, ValueError):
            continue
        if not any(h in cmd for h in _LIFETIME_HELPERS):
            out[int(entry)] = cmd
    return out


@pytest.fixture(autouse=True)
def no_process_left_behind():
    """A test that leaves a process running fails (the process is killed): servers, workers, browsers."""
    before = set(group_processes())
    yield
    deadline = time.monotonic() + 5.0  # a process the test stopped may take a moment to go
    left = {p: c for p, c in group_processes().items() if p not in before}
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = {p: c for p, c in group_processes().items() if p not in before}
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if left:
        pytest.fail("left running (now killed): " + "; ".join(f"{p}: {c[:120]}" for p, c in left.items()),
                    pytrace=False)


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


def write_judged_files(col, root: Path) -> tuple[str, list[str]]:
    """Write a synthetic collection's incomplete judgments (``col.judgments``) as ``root/qrels`` and each run as
    ``root/<tag>.run``: the qrels path and the run paths, the inputs of a command-line test."""
    from bayeval.io import write_qrels, write_run

    write_qrels(col.judgments, root / "qrels")
    runs = []
    for run in col.runs:
        write_run(run, root / f"{run.name}.run")
        runs.append(str(root / f"{run.name}.run"))
    return str(root / "qrels"), runs


@pytest.fixture(scope="session")
def collection_dir_writer():
    """:func:`write_collection_dir` for fixtures of test modules."""
    return write_collection_dir


@pytest.fixture(scope="module")
def coldir(tmp_path_factory):
    """The small synthetic collection directory of the sampling-study tests (6 topics, 5 runs; module scope, so
    each test module gets its own copy). A module may define its own ``coldir`` instead."""
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=6, n_systems=5, n_docs=120, depth=40, judged_depth=40, seed=3)
    return write_collection_dir(col, tmp_path_factory.mktemp("col"))


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


def pymc_density_gaps(model, draw_run_z, n: int = 4, seed: int = 1) -> list:
    """``n`` differences between a hierarchical model's full PyMC log density (without the transform's Jacobian)
    and its :meth:`log_posterior` plus the non-centred Jacobian, at random points whose standardised run
    effects come from ``draw_run_z(rng, S)``; they must all be equal (the two densities agree up to a constant).

    N(z; 0, 1) = N(a; 0, τ) · τ: the non-centred density carries log τ per topic and log σ_s per run.
    """
    logp = model.build_model().compile_logp(jacobian=False)
    rng = np.random.default_rng(seed)
    T, S = len(model.topics), len(model.systems)
    diffs = []
    for _ in range(n):
        h = np.exp(rng.normal(-0.5, 0.3, 3))
        zt, zu, beta = rng.normal(size=T), draw_run_z(rng, S), rng.normal(size=2)
        a, u = h[0] * zt, model.run_sd(h) * zu
        val = float(logp({"beta": beta, "hyper_log__": np.log(h), "topic_z": zt, "run_z": zu}))
        jac = T * np.log(h[0]) + np.sum(np.log(model.run_sd(h)))
        diffs.append(val - (model.log_posterior(beta, a, u, h) + jac))
    return diffs


def held_out_data(seed: int = 0):
    """The held-out runs' collection of tests/test_run_shift.py and tests/test_run_level.py: 10 systems
    (3 independent), 12 topics, judgments from a depth-5 pool of the first two runs."""
    from bayeval.data import RankData
    from bayeval.data.qrels import pool_qrels
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=12, n_systems=10, n_docs=300, depth=50, judged_depth=10, seed=300 + seed,
                          independent=3)
    names = list(col.runs.names)
    return RankData.build(col.runs, pool_qrels(col.runs.select(names[:2]), col.qrels, 5), depth=50)


@pytest.fixture(scope="session")
def held_out_fit():
    """(data, fit): ``hier-default``'s Laplace fit (200 draws, seed 3) on :func:`held_out_data`."""
    from bayeval.relevance import HierarchicalEstimator

    data = held_out_data()
    return data, HierarchicalEstimator("hier-default").fit(data, "laplace", seed=3, draws=200, chains=1)
