"""Reading and writing TREC run files.

Format: one line per retrieved document, six whitespace-separated columns::

    topic  Q0  docno  rank  score  tag

Column 2 (``Q0`` or ``0``) and column 4 (the rank) are ignored, as trec_eval ignores
them: documents are ranked by score descending, ties broken by docno in descending byte
order (trec_eval ``form_res_rels.c``). The run's name is the tag of its first line; a
file that mixes tags is read with a warning. Files may be gzip-compressed.

Errors (one line naming file and line): wrong number of columns, a score that is not a
finite number, a document listed twice for one topic (trec_eval refuses these too), an
empty file.
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from bayeval.data.run import Run, RunSet
from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io._files import decode, read_bytes, split_lines
from bayeval.progress import track

__all__ = ["read_run", "read_runs", "write_run"]

_COLUMNS = ["topic", "q0", "docno", "rank", "score", "tag"]


def read_run(path: str | os.PathLike, name: str | None = None) -> Run:
    """Read one TREC run file (plain or gzip).

    Parameters
    ----------
    path : path-like
        The run file.
    name : str, optional
        Overrides the run tag found in the file.

    Returns
    -------
    Run

    Raises
    ------
    FileFormatError
        Naming the file and line of the first malformed line.
    """
    path = str(path)
    data = read_bytes(path)
    if not data.strip():
        raise FileFormatError(path, None, "empty file: no ranking lines")
    parsed = _parse_fast(data)
    if parsed is None:
        parsed = _parse_checked(data, path)
    tag, topics, starts, docnos, scores, mixed = parsed
    if mixed:
        warnings.warn(f"{path}: lines carry different run tags; using the first, {tag!r}", stacklevel=2)
    return Run._from_sorted(name or tag, topics, starts, docnos, scores)


def read_runs(paths: str | os.PathLike | Iterable[str | os.PathLike], *, threads: int = 2,
              progress: bool | None = None) -> RunSet:
    """Read several runs: a list of files, or a directory (every regular file in it, sorted).

    Files are decompressed and parsed on ``threads`` threads (the work happens in zlib
    and Arrow, which release the GIL). ``progress`` shows a bar (default: on a terminal,
    for more than 20 files).
    """
    if isinstance(paths, (str, os.PathLike)):
        p = Path(paths)
        files = sorted(q for q in p.iterdir() if q.is_file() and not q.name.startswith(".")) if p.is_dir() \
            else [p]
    else:
        files = []
        for item in paths:
            q = Path(item)
            files.extend(sorted(x for x in q.iterdir() if x.is_file() and not x.name.startswith(".")))\
                if q.is_dir() else files.append(q)
    if not files:
        raise BayevalInputError("runs: no run files given")
    show = (len(files) > 20) if progress is None else progress
    if threads > 1 and len(files) > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            runs = list(track(pool.map(read_run, files), total=len(files), description="reading runs",
                              enabled=None if show else False))
    else:
        runs = [read_run(f) for f in track(files, description="reading runs", enabled=None if show else False)]
    return RunSet(tuple(runs))


def write_run(run: Run, path: str | os.PathLike, tag: str | None = None) -> None:
    """Write ``run`` as a TREC run file (ranks 1.., trec_eval order)."""
    frame = run.to_frame()
    with open(path, "w", encoding="utf-8") as fh:
        for t, d, r, s in zip(frame["topic"], frame["docno"], frame["rank"], frame["score"], strict=True):
            fh.write(f"{t} Q0 {d} {r} {s!r} {tag or run.name}\n")


# ---------------------------------------------------------------------- parsing
def _parse_fast(data: bytes):
    """Arrow-based parser for well-formed files; ``None`` when the careful path must decide.

    Returns ``(tag, topic names, group starts, docnos, scores, mixed tags)`` with rows grouped by
    topic and each group in trec_eval order, or ``None`` if the file is not plainly well formed
    or lists a document twice for a topic (the careful parser then reports the line).
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    if data[:1] in (b" ", b"\t") or b"\x0b" in data or b"\x0c" in data:
        return None
    # Exactly one separator character: a tab file with no space, or a space file with no tab.
    # Then a wrong column count (doubled, leading or trailing separators) makes Arrow raise.
    if b"\t" not in data:
        delim = " "
    elif b" " not in data:
        delim = "\t"
    else:
        return None
    try:
        table = pcsv.read_csv(
            io.BytesIO(data),
            read_options=pcsv.ReadOptions(column_names=_COLUMNS, use_threads=False),
            parse_options=pcsv.ParseOptions(delimiter=delim, quote_char=False, double_quote=False),
            convert_options=pcsv.ConvertOptions(
                column_types={"topic": pa.string(), "q0": pa.string(), "docno": pa.string(),
                              "rank": pa.string(), "score": pa.float64(), "tag": pa.string()},
                include_columns=["topic", "docno", "score", "tag"], strings_can_be_null=False,
                quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    n = table.num_rows
    if n == 0 or table.column("score").null_count:
        return None
    scores = table.column("score").to_numpy()
    if not np.all(np.isfinite(scores)):
        return None
    topic_enc = table.column("topic").combine_chunks().dictionary_encode()
    doc_enc = table.column("docno").combine_chunks().dictionary_encode()
    tcode = topic_enc.indices.to_numpy().astype(np.int64)
    dcode = doc_enc.indices.to_numpy().astype(np.int64)
    # a document twice for one topic: equal adjacent (topic, doc) keys once sorted
    key = np.sort(tcode * len(doc_enc.dictionary) + dcode)
    if np.any(key[1:] == key[:-1]):
        return None
    docnos = table.column("docno").combine_chunks()
    if not _in_trec_eval_order(tcode, scores, docnos):
        order = pc.sort_indices(table, sort_keys=[("topic", "ascending"), ("score", "descending"),
                                                  ("docno", "descending")])
        docnos = docnos.take(order)
        order = order.to_numpy()
        tcode, scores = tcode[order], scores[order]
    change = np.flatnonzero(tcode[1:] != tcode[:-1]) + 1
    starts = np.r_[0, change].astype(np.int64)
    names = topic_enc.dictionary.to_pylist()
    topics = [names[tcode[s]] for s in starts]
    if len(set(topics)) != len(topics):  # a topic's rows are split: regroup them
        order = np.lexsort((np.arange(n), tcode))
        tcode, scores, docnos = tcode[order], scores[order], docnos.take(pa.array(order))
        starts = np.r_[0, np.flatnonzero(tcode[1:] != tcode[:-1]) + 1].astype(np.int64)
        topics = [names[tcode[s]] for s in starts]
    mixed = pc.count_distinct(table.column("tag")).as_py() > 1
    return _first_tag(data), topics, starts, docnos, scores, mixed


def _in_trec_eval_order(tcode: np.ndarray, scores: np.ndarray, docnos: np.ndarray) -> bool:
    """Whether rows are grouped by topic (not necessarily contiguously checked here) with scores
    non-increasing inside each topic and ties in descending docno order."""
    same = tcode[1:] == tcode[:-1]
    if np.any(same & (scores[1:] > scores[:-1])):
        return False
    ties = np.flatnonzero(same & (scores[1:] == scores[:-1]))
    if len(ties) == 0:
        return True
    if len(ties) > 1000:  # many ties: compare in Arrow rather than one Python string at a time
        import pyarrow.compute as pc

        return bool(pc.all(pc.greater(docnos.take(ties), docnos.take(ties + 1))).as_py())
    return all(docnos[int(i)].as_py() > docnos[int(i) + 1].as_py() for i in ties)


def _first_tag(data: bytes) -> str:
    end = data.find(b"\n")
    first = data if end < 0 else data[:end]
    return first.split()[-1].decode("utf-8", "replace")


def _parse_checked(data: bytes, path: str):
    """Line-by-line parser: exact error messages with line numbers."""
    topics_col: list[str] = []
    docnos_col: list[str] = []
    scores_col: list[float] = []
    seen: dict[tuple[str, str], int] = {}
    tag = None
    mixed = False
    for lineno, raw in enumerate(split_lines(data), start=1):
        line = raw.strip()
        if not line:
            continue
        fields = line.split()
        if len(fields) != 6:
            raise FileFormatError(path, lineno, f"expected 6 columns 'topic Q0 docno rank score tag', "
                                                f"found {len(fields)}")
        topic = decode(fields[0], path, lineno)
        docno = decode(fields[2], path, lineno)
        try:
            score = float(fields[4])
        except ValueError:
            raise FileFormatError(path, lineno, f"score {fields[4].decode('utf-8', 'replace')!r} "
                                                "is not a number") from None
        if not np.isfinite(score):
            raise FileFormatError(path, lineno, f"score {fields[4].decode()!r} is not a finite number")
        key = (topic, docno)
        if key in seen:
            raise FileFormatError(path, lineno, f"document {docno!r} already listed for topic {topic!r} "
                                                f"on line {seen[key]}")
        seen[key] = lineno
        t = decode(fields[5], path, lineno)
        if tag is None:
            tag = t
        elif t != tag:
            mixed = True
        topics_col.append(topic)
        docnos_col.append(docno)
        scores_col.append(score)
    if tag is None:
        raise FileFormatError(path, None, "empty file: no ranking lines")
    topic_arr = np.array(topics_col, dtype=object)
    docno_arr = np.array(docnos_col, dtype=object)
    score_arr = np.array(scores_col, dtype=np.float64)
    t_uniq, t_code = np.unique(topic_arr.astype(str), return_inverse=True)
    _, d_code = np.unique(docno_arr.astype(str), return_inverse=True)
    order = np.lexsort((-d_code, -score_arr, t_code))
    t_sorted = t_code[order]
    starts = np.flatnonzero(np.r_[True, t_sorted[1:] != t_sorted[:-1]])
    return tag, [str(t_uniq[t_sorted[s]]) for s in starts], starts, docno_arr[order], score_arr[order], mixed
