"""A judging campaign in one SQLite file: runs, targets, every judgment, the selection history.

The file holds everything needed to reopen the campaign anywhere (the target runs' rankings cut to
the campaign depth, the judgments with their time and source, each batch of proposed documents) and
nothing is kept only in memory: the selector is rebuilt from the file by replaying the judgments.

Durability: the database runs in WAL mode with ``synchronous=FULL``; recording a file of judgments
and proposing a batch are each one transaction, so a process killed at any moment (``kill -9``)
leaves either all of a file's judgments or none of them, and a campaign that reopens. Recording the
same judgment again is a no-op; a different grade for a judged document, a topic or document that
is not in the campaign, or a malformed line rejects the whole file, naming the line.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from bayeval.data.coverage import contributing_runs
from bayeval.data.qrels import Qrels
from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.data.topics import sort_topics
from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io.qrels import write_qrels
from bayeval.relevance.topup import COLUMNS, TopUpSample
from bayeval.sampling.design import (
    poisson_draw,
    prior_inclusion,
    proportional_inclusion,
    rank_inclusion,
    rank_stratum,
)
from bayeval.selection.assessors import SOURCES, JudgmentLine, read_judgments
from bayeval.selection.measure import SelectionMeasure
from bayeval.selection.methods import SELECTION_METHODS, make_selector
from bayeval.selection.results import Candidate, SelectionStatus
from bayeval.selection.selector import MOMENTS, Selector, resolve_pairs
from bayeval.selection.topup import draw_topup

__all__ = ["Campaign", "RecordResult"]

FORMAT_VERSION = "1"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (position INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);
CREATE TABLE rankings (run INTEGER NOT NULL, topic TEXT NOT NULL, rank INTEGER NOT NULL, docno TEXT NOT NULL,
                       PRIMARY KEY (run, topic, rank));
CREATE TABLE targets (position INTEGER PRIMARY KEY, run_a TEXT NOT NULL, run_b TEXT NOT NULL);
CREATE TABLE judgments (id INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT NOT NULL, docno TEXT NOT NULL,
                        grade INTEGER NOT NULL, source TEXT NOT NULL, time TEXT NOT NULL, origin TEXT,
                        UNIQUE (topic, docno));
CREATE TABLE selections (id INTEGER PRIMARY KEY AUTOINCREMENT, batch INTEGER NOT NULL, position INTEGER NOT NULL,
                         topic TEXT NOT NULL, docno TEXT NOT NULL, score REAL, run_a TEXT, run_b TEXT,
                         judgments INTEGER NOT NULL, time TEXT NOT NULL);
"""

_SAMPLES_SCHEMA = """
CREATE TABLE IF NOT EXISTS samples (topic TEXT NOT NULL, docno TEXT NOT NULL, stratum TEXT NOT NULL,
                                    inclusion REAL NOT NULL, drawn INTEGER NOT NULL, scheme TEXT NOT NULL,
                                    position INTEGER NOT NULL, time TEXT NOT NULL, PRIMARY KEY (topic, docno))
"""
SAMPLE_SCHEMES = ("rank", "p", "prior")

_TOPUPS_SCHEMA = """
CREATE TABLE IF NOT EXISTS topups (topic TEXT NOT NULL, docno TEXT NOT NULL, run TEXT NOT NULL, round INTEGER NOT NULL,
                                   inclusion REAL NOT NULL, position INTEGER NOT NULL, time TEXT NOT NULL,
                                   PRIMARY KEY (topic, docno))
"""

_SETTINGS = ("measure", "alpha", "method", "depth", "default_p", "refit_every", "config", "seed", "moments",
             "gain", "max_grade", "pool_depth", "relevance_level")


@contextmanager
def _write_transaction(conn: sqlite3.Connection):
    """One write transaction: BEGIN IMMEDIATE (the file is locked for writing from the start), COMMIT at the
    end of the block, ROLLBACK on any exception (which then propagates)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class RecordResult:
    """What :meth:`Campaign.record` did: ``added`` new judgments, ``duplicates`` already recorded."""

    added: int
    duplicates: int


def _with_level(judgments, level: int) -> Qrels:
    """Judgments (Qrels, a frame ``topic, docno, grade`` or None) as Qrels at relevance level ``level``."""
    if judgments is None:
        judgments = pd.DataFrame({"topic": [], "docno": [], "grade": []})
    elif isinstance(judgments, Qrels):
        judgments = judgments.to_frame()
    return Qrels.from_frame(judgments[["topic", "docno", "grade"]], relevance_level=level)


class Campaign:
    """A judging campaign stored in one SQLite file (see the module notes).

    Create with :meth:`Campaign.create`, reopen with :meth:`Campaign.open`.

    Examples
    --------
    >>> import tempfile, os
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=2, n_docs=40, depth=10, seed=1)
    >>> path = os.path.join(tempfile.mkdtemp(), "c.sqlite")
    >>> camp = Campaign.create(path, col.runs, measure="P@5", alpha=0.9)
    >>> batch = camp.next(2)
    >>> camp.record([(c.topic, c.docno, col.qrels.grade_of(c.topic, c.docno)) for c in batch]).added
    2
    >>> Campaign.open(path).status().judgments
    2
    """

    def __init__(self, path, conn: sqlite3.Connection) -> None:
        self.path = os.fspath(path)
        self._conn = conn
        self.settings = self._read_settings()
        self._selector: Selector | None = None
        self._last_id = 0

    # ----------------------------------------------------------------- creation and opening
    @staticmethod
    def _connect(path: str) -> sqlite3.Connection:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    @classmethod
    def create(cls, path, runs: RunSet | Sequence[Run], *, initial: Qrels | None = None, pairs=None,
               measure="AP", alpha: float = 0.95, method: str = "mtc", depth: int | None = 100,
               default_p: float = 0.5, refit_every: int = 10, config: str = "rtc-mtc", seed: int = 0,
               moments: str = "delta", gain: str = "exponential", max_grade: int | None = None,
               relevance_level: int | None = None,
               pool_depth: int | None = None) -> Campaign:
        """Create the campaign file (it must not exist) and return the open campaign.

        Parameters
        ----------
        path : path-like
        runs : RunSet or sequence of Run
            The target runs (stored cut to ``depth``).
        initial : Qrels, optional
            Judgments made before the campaign (recorded with source ``initial``).
        pairs, measure, alpha, default_p, moments, gain, max_grade
            As for :class:`~bayeval.selection.MTCSelector`.
        method : {"mtc", "rtc", "pool", "depth-pool"}
        depth : int, optional
            Cut of every run (default 100; None keeps whole runs).
        refit_every, config, seed
            RTC's refit interval, relevance-model configuration and seed.
        pool_depth : int, optional
            Pool depth of depth-k pooling.
        relevance_level : int, optional
            Lowest grade counted relevant (default: the initial judgments', else 1); the judging scale reaches it.
        """
        path = os.fspath(path)
        if os.path.exists(path):
            raise BayevalInputError(f"campaign: {path} already exists (open it, or choose a new file)")
        runs = runs if isinstance(runs, RunSet) else RunSet(tuple(runs))
        if len(runs) < 2:
            raise BayevalInputError("runs: a campaign compares at least two runs")
        if method not in SELECTION_METHODS:
            raise BayevalInputError(f"method: must be one of {', '.join(SELECTION_METHODS)}, got {method!r}")
        if moments not in MOMENTS:
            raise BayevalInputError(f"moments: must be one of {', '.join(MOMENTS)}, got {moments!r}")
        measure = SelectionMeasure.parse(measure).name
        pa, pb = resolve_pairs(runs.names, pairs)
        topics = sort_topics(runs.topics)
        level = relevance_level if relevance_level is not None else (
            initial.relevance_level if initial is not None else 1)
        if initial is None or initial.relevance_level != level:  # the selector reads the level from its judgments
            initial = _with_level(initial, level)
        settings = {"measure": measure, "alpha": float(alpha), "method": method, "depth": depth,
                    "default_p": float(default_p), "refit_every": int(refit_every), "config": str(config),
                    "seed": seed, "moments": moments, "gain": gain, "max_grade": max_grade,
                    "pool_depth": pool_depth, "relevance_level": level}
        # build the selector once before writing anything: every argument is validated here
        data = RankData.build(runs, initial, depth=depth, topics=topics)
        cls._selector_for(settings, data, [(runs.names[a], runs.names[b]) for a, b in zip(pa, pb, strict=True)])
        tmp = path + ".creating"
        if os.path.exists(tmp):
            os.remove(tmp)
        conn = cls._connect(tmp)
        try:
            conn.executescript(_SCHEMA)
            conn.execute("BEGIN")
            meta = {"format": FORMAT_VERSION, "created": _now(), **{k: json.dumps(v) for k, v in settings.items()}}
            conn.executemany("INSERT INTO meta VALUES (?, ?)", [(k, str(v)) for k, v in meta.items()])
            conn.executemany("INSERT INTO runs VALUES (?, ?)", list(enumerate(runs.names)))
            for s, run in enumerate(runs):
                for t in run.topics:
                    docs = run.ranking(t)
                    if depth is not None:
                        docs = docs[:depth]
                    conn.executemany("INSERT INTO rankings VALUES (?, ?, ?, ?)",
                                     [(s, t, r + 1, str(d)) for r, d in enumerate(docs)])
            conn.executemany("INSERT INTO targets VALUES (?, ?, ?)",
                             [(k, runs.names[a], runs.names[b]) for k, (a, b) in enumerate(zip(pa, pb, strict=True))])
            if initial is not None:
                now = _now()
                rows = [(t, str(d), int(g), "initial", now, None) for t in initial.topics
                        for d, g in zip(initial[t].docnos, initial[t].grades, strict=True)]
                conn.executemany("INSERT INTO judgments (topic, docno, grade, source, time, origin) "
                                 "VALUES (?, ?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except BaseException:
            conn.close()
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(tmp + suffix):
                    os.remove(tmp + suffix)
            raise
        conn.close()
        for suffix in ("-wal", "-shm"):
            if os.path.exists(tmp + suffix):
                os.remove(tmp + suffix)
        os.replace(tmp, path)  # the campaign appears complete or not at all
        return cls.open(path)

    @classmethod
    def open(cls, path) -> Campaign:
        """Open an existing campaign file."""
        path = os.fspath(path)
        if not os.path.isfile(path):
            raise BayevalInputError(f"campaign: {path} does not exist (create it with 'bayeval judge init')")
        try:
            conn = cls._connect(path)
            conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise BayevalInputError(f"campaign: {path} is not a bayeval campaign ({exc})") from None
        return cls(path, conn)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Campaign:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _read_settings(self) -> dict:
        try:
            rows = dict(self._conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise BayevalInputError(f"campaign: {self.path} is not a bayeval campaign ({exc})") from None
        if rows.get("format") != FORMAT_VERSION:
            raise BayevalInputError(f"campaign: {self.path} has format {rows.get('format')!r}, expected "
                                    f"{FORMAT_VERSION!r}")
        out = {k: json.loads(rows[k]) for k in _SETTINGS if k in rows}
        out["created"] = rows.get("created")
        return out

    # ----------------------------------------------------------------- the selector
    @staticmethod
    def _selector_for(settings: dict, data: RankData, pairs) -> Selector:
        kw = {"pairs": pairs, "measure": settings["measure"], "alpha": settings["alpha"],
              "moments": settings["moments"], "gain": settings["gain"], "max_grade": settings["max_grade"]}
        if settings["method"] != "rtc":
            kw["default_p"] = settings["default_p"]
        return make_selector(settings["method"], data, refit_every=settings["refit_every"], config=settings["config"],
                             seed=settings["seed"], pool_depth=settings["pool_depth"], **kw)

    def runs(self) -> RunSet:
        """The target runs as stored (cut to the campaign depth)."""
        names = [r[0] for r in self._conn.execute("SELECT name FROM runs ORDER BY position")]
        frame = pd.read_sql_query("SELECT run, topic, rank, docno FROM rankings", self._conn)
        out = []
        for s, name in enumerate(names):
            f = frame[frame["run"] == s]
            out.append(Run.from_frame(pd.DataFrame({"topic": f["topic"], "docno": f["docno"],
                                                    "score": -f["rank"].astype(float)}), name=name))
        return RunSet(tuple(out))

    def pairs(self) -> list[tuple[str, str]]:
        return [(a, b) for a, b in self._conn.execute("SELECT run_a, run_b FROM targets ORDER BY position")]

    def selector(self) -> Selector:
        """The selector with every recorded judgment applied (rebuilt from the file on first use)."""
        if self._selector is None:
            runs = self.runs()
            rows = self._conn.execute("SELECT id, topic, docno, grade, source FROM judgments ORDER BY id").fetchall()
            init = [r for r in rows if r[4] == "initial"]
            initial = _with_level(pd.DataFrame({"topic": [r[1] for r in init], "docno": [r[2] for r in init],
                                                "grade": [r[3] for r in init]}), int(self.settings["relevance_level"]))
            data = RankData.build(runs, initial, depth=None, topics=sort_topics(runs.topics))
            sel = self._selector_for(self.settings, data, self.pairs())
            sel.replay([(r[1], r[2], r[3]) for r in rows if r[4] != "initial"])
            self._selector = sel
            self._last_id = rows[-1][0] if rows else 0
        else:
            self._catch_up()
        return self._selector

    def _catch_up(self) -> None:
        """Apply judgments another process recorded since this one last looked (rebuild after a retraction)."""
        rows = self._conn.execute("SELECT id, topic, docno, grade FROM judgments WHERE id > ? AND source != "
                                  "'initial' ORDER BY id", (self._last_id,)).fetchall()
        if len(rows) == 1:  # the common case (one judgment recorded): the per-topic update, same state as replay
            self._selector.record(rows[0][1], rows[0][2], rows[0][3])
            self._last_id = rows[0][0]
        elif rows:
            self._selector.replay([(r[1], r[2], r[3]) for r in rows])
            self._last_id = rows[-1][0]
        n = self._conn.execute("SELECT COUNT(*) FROM judgments WHERE source != 'initial'").fetchone()[0]
        if n != self._selector.judgments:  # another process retracted a judgment: replay what is left
            self._selector = None
            self.selector()

    # ----------------------------------------------------------------- operations
    def next(self, n: int = 20, *, stay_on: str | None = None, tolerance: float = 0.0) -> list[Candidate]:
        """Propose the next ``n`` documents to judge and log them as one batch of the selection history.

        Documents drawn by :meth:`draw_sample` and not judged yet come first (score ``nan``), in their random
        order; the selector's picks fill the rest. ``stay_on`` and ``tolerance`` (``n=1``): keep the assessor
        on that topic while a document there is worth at least ``1 - tolerance`` of the best anywhere
        (:meth:`Selector.select`).
        """
        sel = self.selector()
        cands = self._pending_sample(n)
        if len(cands) < n:
            taken = {(c.topic, c.docno) for c in cands}
            picks = sel.select(n - len(cands) + len(taken), stay_on=stay_on, tolerance=tolerance)
            cands += [c for c in picks if (c.topic, c.docno) not in taken][: n - len(cands)]
        if cands:
            now = _now()
            conn = self._conn
            with _write_transaction(conn):
                batch = conn.execute("SELECT COALESCE(MAX(batch), 0) + 1 FROM selections").fetchone()[0]
                conn.executemany("INSERT INTO selections (batch, position, topic, docno, score, run_a, run_b, "
                                 "judgments, time) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                 [(batch, k + 1, c.topic, c.docno, c.score, c.run_a, c.run_b, sel.judgments, now)
                                  for k, c in enumerate(cands)])
        return cands

    def record(self, judgments, *, source: str = "human", origin: str | None = None) -> RecordResult:
        """Record judgments: a path of a judgments file, or ``(topic, docno, grade)`` tuples / JudgmentLines.

        All or nothing: every line is checked first (known topic and document, integer grade, no grade
        conflicting with a recorded one or with another line), then all are written in one transaction.
        ``origin`` labels judgments given as tuples (who or what made them, e.g. ``serve:alice``); a file's
        judgments are labelled ``file:line``.

        Raises
        ------
        FileFormatError
            Naming the file and line of the first bad judgment (BayevalInputError for tuples).
        """
        if source not in SOURCES or source == "initial":
            raise BayevalInputError(f"source: must be one of human, qrels, model; got {source!r}")
        label = origin
        origin = None
        if isinstance(judgments, (str, os.PathLike)):
            origin = os.fspath(judgments)
            lines = read_judgments(origin)
        else:
            lines = [j if isinstance(j, JudgmentLine) else JudgmentLine(str(j[0]), str(j[1]), j[2], k + 1)
                     for k, j in enumerate(judgments)]
        sel = self.selector()

        def fail(line: JudgmentLine, message: str):
            if origin is not None:
                raise FileFormatError(origin, line.line, message)
            raise BayevalInputError(f"judgments[{line.line - 1}]: {message}")

        conn = self._conn
        with _write_transaction(conn):
            self._catch_up()
            sel = self._selector
            new, dup, seen = [], 0, {}
            for ln in lines:
                try:
                    old = sel.check_judgment(ln.topic, ln.docno, ln.grade)
                except BayevalInputError as exc:
                    fail(ln, exc.reason)
                key = (ln.topic, ln.docno)
                old = seen.get(key) if old is None else old
                if old is not None:
                    if old != int(ln.grade):
                        fail(ln, f"document {ln.docno!r} of topic {ln.topic!r} is already judged {old}, "
                                 f"not {int(ln.grade)}")
                    dup += 1
                    continue
                seen[key] = int(ln.grade)
                new.append(ln)
            now = _now()
            conn.executemany("INSERT INTO judgments (topic, docno, grade, source, time, origin) VALUES "
                             "(?, ?, ?, ?, ?, ?)",
                             [(ln.topic, ln.docno, int(ln.grade), source, now,
                               label if origin is None else f"{origin}:{ln.line}") for ln in new])
        self._catch_up()
        return RecordResult(len(new), dup)

    def retract_last(self, origin: str) -> JudgmentLine | None:
        """Delete the most recent judgment recorded with ``origin`` (an assessor's undo); returns it, or None.

        The deletion is one transaction; the selector is rebuilt from the remaining judgments (a replay,
        so the campaign is in the state it had before that judgment was recorded).
        """
        conn = self._conn
        with _write_transaction(conn):
            row = conn.execute("SELECT id, topic, docno, grade FROM judgments WHERE origin = ? AND source != "
                               "'initial' ORDER BY id DESC LIMIT 1", (str(origin),)).fetchone()
            if row is not None:
                conn.execute("DELETE FROM judgments WHERE id = ?", (row[0],))
        if row is None:
            return None
        self._selector = None
        return JudgmentLine(row[1], row[2], int(row[3]), 0)

    def by_origin(self, origin: str) -> tuple[int, JudgmentLine | None]:
        """How many judgments carry ``origin``, and the most recent of them (None when there is none)."""
        n = self._conn.execute("SELECT COUNT(*) FROM judgments WHERE origin = ?", (str(origin),)).fetchone()[0]
        row = self._conn.execute("SELECT topic, docno, grade FROM judgments WHERE origin = ? ORDER BY id DESC "
                                 "LIMIT 1", (str(origin),)).fetchone()
        return int(n), (None if row is None else JudgmentLine(row[0], row[1], int(row[2]), 0))

    def judge(self, assessor, *, budget: int | None = None, source: str | None = None) -> int:
        """Run the judging loop against ``assessor`` (``judge(topic, docno) -> grade``), one committed
        judgment at a time, until done (and every drawn document judged) or ``budget`` judgments; returns how
        many were made."""
        sel = self.selector()
        made = 0
        src = source or getattr(assessor, "source", "human")
        while (not sel.done or self._pending_sample(1)) and (budget is None or made < budget):
            cands = self.next(1)
            if not cands:
                break
            c = cands[0]
            self.record([(c.topic, c.docno, int(assessor.judge(c.topic, c.docno)))], source=src)
            made += 1
        return made

    def status(self) -> SelectionStatus:
        return self.selector().status()

    def judgments(self) -> pd.DataFrame:
        """Every judgment: ``id, topic, docno, grade, source, time, origin``."""
        return pd.read_sql_query("SELECT id, topic, docno, grade, source, time, origin FROM judgments ORDER BY id",
                                 self._conn)

    def history(self) -> pd.DataFrame:
        """Every proposed document: ``batch, position, topic, docno, score, run_a, run_b, judgments, time``."""
        return pd.read_sql_query("SELECT batch, position, topic, docno, score, run_a, run_b, judgments, time "
                                 "FROM selections ORDER BY id", self._conn)

    def counts(self) -> dict:
        """Judgments by source."""
        return dict(self._conn.execute("SELECT source, COUNT(*) FROM judgments GROUP BY source").fetchall())

    def export_qrels(self, path) -> int:
        """Write every judgment (initial ones included) as a TREC qrels file; returns the line count."""
        write_qrels(self._all_qrels(), path)
        return int(self._conn.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])

    # ----------------------------------------------------------------- random samples of the pool
    def draw_sample(self, share: float | None = None, *, per_topic: float | None = None, scheme: str = "rank",
                    probabilities=None, floor: float = 0.05, seed: int = 0) -> int:
        """Draw a random share of each topic's pool to judge, beside the selector's picks; returns how many.

        ``share``: the expected share of each topic's pool drawn; or ``per_topic``: the expected number drawn in
        each topic (its share ``min(1, per_topic / N_t)``, ``N_t`` the topic's pool), one of the two.

        The pool is every document of the stored rankings. ``scheme="rank"``: strata by the best rank any target
        run gives the document, rates 10 : 5 : 2 (as xinfAP samples); ``scheme="p"``: proportional to
        ``probabilities`` (a :class:`~bayeval.data.RelevanceProbabilities`, ``default_p`` where absent) with a
        ``floor``, as statAP samples (:mod:`bayeval.sampling.design`); ``scheme="prior"``: proportional to the
        AP-prior of the target runs' ranks (:func:`bayeval.sampling.design.prior_inclusion`, depth the campaign's
        ``depth`` or, without one, the deepest stored rank; relative ``floor``), statAP's own design — its
        recorded stratum is the best-rank stratum, a label only (the draw is not stratified). Every pooled
        document's stratum and inclusion probability, and whether it was drawn, are written in one transaction
        (table ``samples``): a process killed while drawing leaves the draw complete or absent. A campaign holds
        one draw.
        """
        if scheme not in SAMPLE_SCHEMES:
            raise BayevalInputError(f"scheme: must be one of {', '.join(SAMPLE_SCHEMES)}, got {scheme!r}")
        if (share is None) == (per_topic is None):
            raise BayevalInputError("share, per_topic: give one of the two")
        if per_topic is not None and not float(per_topic) >= 1:
            raise BayevalInputError(f"per_topic: judgments per topic, at least 1, got {per_topic!r}")
        conn = self._conn
        if self._has_samples() and conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0]:
            raise BayevalInputError(f"campaign: {self.path} already holds a random sample")
        frame = pd.read_sql_query("SELECT topic, docno, MIN(rank) AS best FROM rankings GROUP BY topic, docno "
                                  "ORDER BY topic, docno", conn)
        if scheme == "prior":
            ranked = pd.read_sql_query("SELECT run, topic, rank, docno FROM rankings", conn)
            n_runs = conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            depth = self.settings.get("depth")
            depth = int(ranked["rank"].max()) if depth is None else int(depth)
            ranked_of = dict(tuple(ranked.groupby("topic", sort=False)))  # one pass, not a scan per topic
        rng = np.random.default_rng(seed)
        rows = []
        for topic, g in frame.groupby("topic", sort=True):
            docs, best = g["docno"].to_numpy(), g["best"].to_numpy()
            share = min(1.0, float(per_topic) / len(docs)) if per_topic is not None else share
            if scheme == "rank":
                pi, stratum = rank_inclusion(best, share), rank_stratum(best) + 1
            elif scheme == "prior":
                r = ranked_of[topic]
                ranks = np.zeros((len(docs), n_runs), dtype=np.int64)
                ranks[pd.Index(docs).get_indexer(r["docno"]), r["run"].to_numpy()] = r["rank"].to_numpy()
                pi, stratum = prior_inclusion(ranks, share, depth, floor), rank_stratum(best) + 1
            else:
                p = (np.full(len(docs), float(self.settings["default_p"])) if probabilities is None
                     else probabilities.lookup(topic, docs, float(self.settings["default_p"])))
                pi, stratum = proportional_inclusion(p, share, floor), np.zeros(len(docs), dtype=np.int32)
            drawn = poisson_draw(pi, rng)
            order = rng.permutation(len(docs))  # the order in which drawn documents are served
            rows += [(str(topic), str(docs[i]), str(stratum[i]), float(pi[i]), int(drawn[i]), scheme, int(k))
                     for k, i in enumerate(order)]
        now = _now()
        with _write_transaction(conn):
            conn.execute(_SAMPLES_SCHEMA)
            if conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0]:  # another process drew meanwhile
                raise BayevalInputError(f"campaign: {self.path} already holds a random sample")
            conn.executemany("INSERT INTO samples (topic, docno, stratum, inclusion, drawn, scheme, position, time) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [(*r, now) for r in rows])
        return sum(r[4] for r in rows)

    def _has_samples(self) -> bool:
        return self._conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'samples'"
                                  ).fetchone() is not None

    def _pending_sample(self, n: int) -> list[Candidate]:
        rows = []
        if self._has_samples():
            rows = self._conn.execute(
                "SELECT s.topic, s.docno FROM samples s WHERE s.drawn = 1 AND NOT EXISTS (SELECT 1 FROM judgments j "
                "WHERE j.topic = s.topic AND j.docno = s.docno) ORDER BY s.position, s.topic LIMIT ?",
                (int(n),)).fetchall()
        if len(rows) < n and self._has_table("topups"):
            rows += self._conn.execute(
                "SELECT u.topic, u.docno FROM topups u WHERE NOT EXISTS (SELECT 1 FROM judgments j WHERE j.topic = "
                "u.topic AND j.docno = u.docno) ORDER BY u.position LIMIT ?", (int(n) - len(rows),)).fetchall()
        return [Candidate(t, d, float("nan")) for t, d in rows]

    def _has_table(self, name: str) -> bool:
        return self._conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
                                  ).fetchone() is not None

    # ----------------------------------------------------------------- top-ups of runs that did not contribute
    def draw_topup(self, runs: Sequence[str], per_topic: int, *, seed: int = 0) -> int:
        """Draw a top-up of ``runs`` — runs that did not contribute to the judgments — to judge: ``per_topic``
        rounds, each one document of each run and topic among the run's unjudged documents within the campaign
        depth, drawn with probability proportional to the AP-prior weight of its rank and recorded with that
        probability (:func:`bayeval.selection.topup.draw_topup`; docs/notes/calibration-record.md, "Where things
        stand"). Returns how many were drawn.

        'next' serves the drawn documents (after a random sample's) before the selector's picks; the judged ones
        are what ``bayeval evaluate --topup`` and :func:`bayeval.relevance.estimate_probabilities` ``topup=``
        learn the runs' levels from (:meth:`topup_sample`). The contributing runs are those the judgments other
        than the top-ups' cover (:func:`bayeval.data.coverage.contributing_runs`). Another top-up of the same
        runs continues their rounds and never draws a document twice. The draw is written in one transaction: a
        process killed while drawing leaves it complete or absent.
        """
        conn = self._conn
        names = self.runs().names
        unknown = [r for r in runs if r not in names]
        if unknown:
            raise BayevalInputError(f"runs: {unknown[0]!r} is not a run of the campaign ({', '.join(names[:5])}"
                                    f"{', ...' if len(names) > 5 else ''})")
        old = self.topup_sample()
        data = old.without(RankData.build(self.runs(), self._all_qrels(), topics=sort_topics(self.runs().topics)))
        taken = set(zip(old.frame["topic"], old.frame["docno"], strict=True))
        if self._has_samples():
            s = self.samples()
            taken |= set(zip(s["topic"][s["drawn"] == 1], s["docno"][s["drawn"] == 1], strict=True))
        done = old.frame[old.frame["run"].isin(list(runs))]["round"]
        depth = self.settings.get("depth") or int(max(len(r.ranking(t)) for r in self.runs() for t in r.topics))
        draw = draw_topup(data, list(runs), per_topic, depth=int(depth), rng=np.random.default_rng(seed),
                          contributing=contributing_runs(data), taken=taken,
                          first_round=int(done.max()) + 1 if len(done) else 1)
        now = _now()
        with _write_transaction(conn):
            conn.execute(_TOPUPS_SCHEMA)
            start = conn.execute("SELECT COALESCE(MAX(position), 0) FROM topups").fetchone()[0]
            conn.executemany("INSERT INTO topups (topic, docno, run, round, inclusion, position, time) VALUES "
                             "(?, ?, ?, ?, ?, ?, ?)",
                             [(r.topic, r.docno, r.run, int(r.round), float(r.inclusion), int(start) + k + 1, now)
                              for k, r in enumerate(draw.frame.itertuples(index=False))])
        return len(draw.frame)

    def topup_sample(self):
        """The top-ups drawn so far as a :class:`~bayeval.relevance.topup.TopUpSample` (grade −1 where not judged
        yet; empty when none was drawn)."""
        level = int(self.settings["relevance_level"])
        if not self._has_table("topups"):
            return TopUpSample(pd.DataFrame({c: [] for c in COLUMNS}), level)
        f = pd.read_sql_query("SELECT u.topic, u.docno, COALESCE(j.grade, -1) AS grade, u.run, u.round, u.inclusion "
                              "FROM topups u LEFT JOIN judgments j ON j.topic = u.topic AND j.docno = u.docno "
                              "ORDER BY u.position", self._conn)
        return TopUpSample(f, level)

    def export_topup(self, path) -> int:
        """Write the top-ups as ``topic docno grade run round inclusion`` lines (:mod:`bayeval.relevance.topup`);
        returns the line count."""
        s = self.topup_sample()
        if not len(s.frame):
            raise BayevalInputError(f"campaign: {self.path} holds no top-up (draw one with 'bayeval judge topup')")
        return s.write(path)

    def _all_qrels(self) -> Qrels:
        f = self.judgments()
        return Qrels.from_frame(f[["topic", "docno", "grade"]], relevance_level=int(self.settings["relevance_level"]))

    def samples(self) -> pd.DataFrame:
        """The pool with its random draw: ``topic, docno, stratum, inclusion, drawn, scheme, grade`` (``grade``:
        the judgment where one is recorded, else NaN). Empty when no sample was drawn."""
        cols = ["topic", "docno", "stratum", "inclusion", "drawn", "scheme", "grade"]
        if not self._has_samples():
            return pd.DataFrame(columns=cols)
        return pd.read_sql_query(
            "SELECT s.topic, s.docno, s.stratum, s.inclusion, s.drawn, s.scheme, j.grade FROM samples s LEFT JOIN "
            "judgments j ON j.topic = s.topic AND j.docno = s.docno ORDER BY s.topic, s.docno", self._conn)[cols]

    def chosen_by(self) -> pd.DataFrame:
        """Every judgment with how it was chosen: ``topic, docno, grade, chosen`` (``sample`` — drawn at random,
        with its ``inclusion`` probability —, ``initial`` or ``selection``) and ``inclusion`` (NaN unless sampled)."""
        f = self.judgments()[["topic", "docno", "grade", "source"]]
        s = self.samples()
        s = s[s["drawn"] == 1][["topic", "docno", "inclusion"]]
        out = f.merge(s, on=["topic", "docno"], how="left")
        out["chosen"] = np.where(out["inclusion"].notna(), "sample",
                                 np.where(out["source"] == "initial", "initial", "selection"))
        return out[["topic", "docno", "grade", "chosen", "inclusion"]]

    def export_prels(self, path) -> int:
        """Write the judged documents of the random draw as prels ``topic docno grade scheme inclusion``
        (what :func:`bayeval.sampling.stat_measures` reads); returns the line count."""
        s = self.samples()
        s = s[(s["drawn"] == 1) & s["grade"].notna()]
        with open(path, "w", encoding="utf-8") as fh:
            for r in s.itertuples(index=False):
                fh.write(f"{r.topic} {r.docno} {int(r.grade)} {r.scheme} {r.inclusion:.10g}\n")
        return len(s)

    def export_sample(self, path) -> int:
        """Write the pool as NIST's stratified sample ``topic 0 docno stratum rel`` (``rel`` the grade of drawn
        and judged documents, ``-1`` otherwise) for xinfAP; only for a rank-stratified draw. Returns the lines."""
        s = self.samples()
        if not len(s):
            raise BayevalInputError(f"campaign: {self.path} holds no random sample (draw one first)")
        if (s["scheme"] != "rank").any():
            what = "the AP-prior of the runs' ranks" if (s["scheme"] == "prior").any() else "p"
            raise BayevalInputError(f"campaign: the sample is proportional to {what}, not stratified: export prels")
        with open(path, "w", encoding="utf-8") as fh:
            for r in s.itertuples(index=False):
                rel = int(r.grade) if r.drawn == 1 and pd.notna(r.grade) else -1
                fh.write(f"{r.topic} 0 {r.docno} {r.stratum} {rel}\n")
        return len(s)

    def __repr__(self) -> str:
        return f"Campaign({self.path!r}, method={self.settings['method']}, measure={self.settings['measure']})"


