"""The judging page under load and under kill -9 (docs/judging.md, docs/benchmarks.md).

A TREC-8 campaign of 2 runs × 50 topics with RTC (AP, α = 0.95, depth 100; the full qrels answer as the
assessors). ``bayeval judge serve`` runs in a subprocess on 127.0.0.1; 4 assessor threads, each with its own
HTTP client on loopback, judge a bounded number of documents each.

1. Latency: the time from sending ``POST /judge`` to receiving the next document's page (the 303 followed) —
   the judgment is committed to SQLite and the next document leased inside it. Reference, measured in the same
   run: the same work without the web layer (``Campaign.record`` + ``Campaign.next(1)`` in one process on a
   copy of the campaign), one judgment at a time. Prints p50/p95/max of both and the ratio.
2. Durability: ``--kills`` times, the server is killed with SIGKILL at a random moment while the 4 assessors
   judge, and restarted; assessors retry after a refused connection (re-posting the judgment they were
   making, which the campaign records at most once). At the end every acknowledged judgment must be in the
   file with its grade (lost = 0), no document judged twice (duplicated = 0), and every grade the qrels'.

    python benchmarks/bench_serve.py --per-assessor 40 --kills 20 --seed 0

Needs ../shared/data/trec8 and bayeval[serve] + httpx. Loopback only; every request count is bounded.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8"
SHOWN = re.compile(r'id="topic">([^<]*)</span>.*?id="docno">([^<]*)</span>', re.S)
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, argv, log):
        self.argv, self.log, self.proc = argv, log, None
        self.port = free_port()

    def start(self) -> float:
        t0 = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-m", "bayeval.cli", "judge", "serve", *self.argv, "--port",
                                      str(self.port)], stdout=self.log, stderr=subprocess.STDOUT)
        while True:
            if self.proc.poll() is not None:
                raise SystemExit(f"server exited with {self.proc.returncode}")
            try:
                if httpx.get(f"{self.url}progress.json", timeout=2).status_code == 200:
                    return time.perf_counter() - t0
            except httpx.HTTPError:
                time.sleep(0.05)
            if time.perf_counter() - t0 > 300:
                raise SystemExit("server did not start in 300 s")

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


class Assessor(threading.Thread):
    """Judges up to ``budget`` documents through the page; records latencies and acknowledged judgments."""

    def __init__(self, name, server, qrels, budget, up: threading.Event, think: float = 0.0, seed: int = 0,
                 stop: threading.Event | None = None):
        super().__init__(daemon=True)
        self.stop = stop or threading.Event()
        self.think, self.rng = think, np.random.default_rng(seed)
        self.name_, self.server, self.qrels, self.budget, self.up = name, server, qrels, budget, up
        self.latencies, self.acked, self.retries, self.conflicts, self.error = [], [], 0, 0, None

    def run(self):
        try:
            with httpx.Client(base_url=self.server.url, timeout=60, follow_redirects=True) as c:
                page = self._call(c, lambda: c.get("/"))
                csrf = CSRF.search(page.text).group(1)
                page = self._call(c, lambda: c.post("/login", data={"name": self.name_, "csrf": csrf}))
                while len(self.acked) < self.budget and not self.stop.is_set():
                    m = SHOWN.search(page.text)
                    if m is None:
                        if 'id="next"' in page.text and ("nothing is left" in page.text or "No unjudged" in page.text):
                            return
                        page = self._call(c, lambda: c.post("/next", data={"csrf": csrf}))
                        if SHOWN.search(page.text) is None:
                            return  # nothing left for this assessor
                        continue
                    topic, docno = m.group(1), m.group(2)
                    grade = self.qrels.grade_of(topic, docno)
                    data = {"csrf": csrf, "topic": topic, "docno": docno, "grade": str(grade)}
                    if self.think:
                        time.sleep(float(self.rng.uniform(0.0, 2.0 * self.think)))  # reading the document
                    t0 = time.perf_counter()
                    page = self._call(c, lambda data=data: c.post("/judge", data=data))
                    self.latencies.append(time.perf_counter() - t0)
                    if page.status_code == 409:  # after a restart another assessor was given this document
                        self.conflicts += 1
                        page = self._call(c, lambda: c.get("/"))
                        continue
                    if page.status_code != 200:
                        raise RuntimeError(f"{self.name_}: {page.status_code} {page.text[:200]}")
                    self.acked.append((topic, docno, grade))
        except Exception as exc:  # reported by the main thread
            self.error = exc

    def _call(self, c, fn):
        while True:
            try:
                return fn()
            except httpx.TransportError:  # the server was killed: wait for the restart, then post again
                self.retries += 1
                self.up.wait(300)
                time.sleep(0.01)


def percentiles(x) -> str:
    x = np.asarray(x) * 1000
    return f"p50 {np.percentile(x, 50):.1f} ms, p95 {np.percentile(x, 95):.1f} ms, max {x.max():.1f} ms (n={len(x)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default="ric8tpn,acsys8alo2", help="the two TREC-8 runs (a pair needing many "
                                                                  "judgments: 734 under RTC in docs/judging.md)")
    ap.add_argument("--method", default="rtc", help="campaign method (default rtc; mtc shows the page without refits)")
    ap.add_argument("--assessors", type=int, default=4)
    ap.add_argument("--per-assessor", type=int, default=40, help="judgments per assessor in the latency phase")
    ap.add_argument("--think", type=float, default=1.0, help="mean seconds an assessor reads a document before "
                                                             "judging it (uniform on [0, 2 think]; 0: no pause)")
    ap.add_argument("--kill-think", type=float, default=0.05, help="the same in the kill phase")
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--kill-per-assessor", type=int, default=400, help="at most this many judgments per assessor "
                                                                        "in the kill phase (it ends after the kills)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", default=None, help="directory to keep the campaign in (default a temporary one)")
    args = ap.parse_args()

    from bayeval.io import read_qrels, read_runs
    from bayeval.selection import Campaign

    rng = np.random.default_rng(args.seed)
    work = Path(args.keep or tempfile.mkdtemp(prefix="bench_serve_"))
    work.mkdir(parents=True, exist_ok=True)
    a, b = args.runs.split(",")
    runs = read_runs([DATA / "runs" / f"input.{a}.gz", DATA / "runs" / f"input.{b}.gz"])
    qrels = read_qrels(DATA / "qrels.txt.gz")
    camp_path = work / "trec8.sqlite"
    for p in work.glob("trec8.sqlite*"):
        p.unlink()
    t0 = time.perf_counter()
    Campaign.create(camp_path, runs, measure="AP", alpha=0.95, method=args.method, depth=100).close()
    print(f"campaign: {a} vs {b}, 50 topics, {args.method}, AP, depth 100; created in {time.perf_counter() - t0:.1f} s")
    texts = work / "texts.tsv"  # TREC-8 has no texts: a paragraph per document stands in
    with open(texts, "w") as fh:
        for d in sorted({str(d) for r in runs for t in r.topics for d in r.ranking(t)[:100]}):
            fh.write(f"{d}\t" + f"Text of {d}. " * 40 + "\n")

    # reference: the same work without the web layer, on a copy
    ref_path = work / "reference.sqlite"
    shutil.copy(camp_path, ref_path)
    ref_lat = []
    with Campaign.open(ref_path) as ref:
        c = ref.next(1)[0]
        for _ in range(args.assessors * args.per_assessor):
            t0 = time.perf_counter()
            ref.record([(c.topic, c.docno, qrels.grade_of(c.topic, c.docno))])
            nxt = ref.next(1)
            ref_lat.append(time.perf_counter() - t0)
            if not nxt:
                break
            c = nxt[0]
    log = open(work / "server.log", "ab")
    server = Server([str(camp_path), "--texts", str(texts)], log)
    print(f"server started in {server.start():.1f} s")
    up = threading.Event()
    up.set()
    team = [Assessor(f"assessor{k}", server, qrels, args.per_assessor, up, args.think, args.seed + k)
            for k in range(args.assessors)]
    t0 = time.perf_counter()
    for t in team:
        t.start()
    for t in team:
        t.join()
    wall = time.perf_counter() - t0
    for t in team:
        if t.error is not None:
            raise SystemExit(f"assessor failed: {t.error!r}")
    lat = [x for t in team for x in t.latencies]
    p95, ref95 = np.percentile(lat, 95), np.percentile(ref_lat, 95)
    print(f"latency, judgment + next page, {args.assessors} assessors over HTTP (reading {args.think:g} s on "
          f"average): {percentiles(lat)}; {len(lat) / wall:.1f} judgments/s")
    print(f"reference, Campaign.record + Campaign.next(1) in process, one at a time: {percentiles(ref_lat)}")
    print(f"ratio p95 server / p95 reference: {p95 / ref95:.2f}; goal p95 <= 100 ms: "
          f"{'met' if p95 * 1000 <= 100 else 'NOT met'}")

    # durability: kill -9 at random moments while 4 assessors judge
    stop = threading.Event()
    team = [Assessor(f"killed{k}", server, qrels, args.kill_per_assessor, up, args.kill_think, args.seed + 100 + k,
                     stop) for k in range(args.assessors)]
    for t in team:
        t.start()
    restarts = []
    for _ in range(args.kills):
        time.sleep(float(rng.uniform(0.1, 0.8)))  # short enough that 20 kills land before the pair is decided
        if not any(t.is_alive() for t in team):
            break
        up.clear()
        server.kill()
        restarts.append(server.start())
        up.set()
    time.sleep(1.0)
    stop.set()
    for t in team:
        t.join()
    for t in team:
        if t.error is not None:
            raise SystemExit(f"assessor failed: {t.error!r}")
    server.kill()
    log.close()
    acked = [j for t in team for j in t.acked]
    with Campaign.open(camp_path) as camp:
        f = camp.judgments()
    rows = list(zip(f["topic"], f["docno"], f["grade"].astype(int), strict=True))
    recorded = {(t, d): g for t, d, g in rows}
    lost = [j for j in acked if recorded.get(j[:2]) != j[2]]
    dup = len(rows) - len(recorded)
    wrong = sum(g != qrels.grade_of(t, d) for t, d, g in rows)
    twice = len(acked) - len({j[:2] for j in acked})  # one document judged by two assessors (recorded once)
    if not restarts:
        return
    print(f"kill -9: {len(restarts)} kills (restart {np.mean(restarts):.1f} s on average), "
          f"{sum(t.retries for t in team)} retried requests, {sum(t.conflicts for t in team)} refused as held by "
          f"another assessor after a restart; {len(acked)} judgments acknowledged in that phase, "
          f"{len(rows)} in the file; lost {len(lost)}, duplicated {dup}, grade differing from the qrels {wrong}; "
          f"{twice} documents acknowledged to two assessors")
    if lost or dup or wrong:
        raise SystemExit("FAILED: judgments lost or duplicated")


if __name__ == "__main__":
    main()
