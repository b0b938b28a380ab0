"""Reading and writing run files.

Layouts (docs/data.md), chosen per file by the number of columns of its first data line:

* TREC, six whitespace-separated columns ``topic Q0 docno rank score tag``. Column 2 (``Q0`` or
  ``0``) and column 4 (the rank) are ignored, as trec_eval ignores them: documents are ranked by
  score descending, ties broken by docno in descending byte order (trec_eval ``form_res_rels.c``).
* MS MARCO, ``qid docid rank`` (three columns, tab-separated in the official files) or ``qid docid
  rank score`` (four): the rank gives the order. The score column, if any, must be a number and is
  otherwise ignored; the run's score of a document is ``-rank``, so that trec_eval's rule (score
  descending, then docno descending) reproduces the file's order, equal ranks included.

Files may be gzip-compressed; CRLF line ends and a UTF-8 byte-order mark are accepted; blank lines and
lines starting with ``#`` are skipped.

Tolerated, with one :class:`~bayeval.errors.DataNotice` per file (``strict=True``: an error naming file
and line instead): a document listed twice for one topic — trec_eval stops on such a file; bayeval keeps
the first occurrence in ranked order and drops the others —, and a file that mixes run tags (the first
is used). Errors (one line naming file and line): a wrong number of columns, a score that is not a
finite number, a rank that is not an integer, text that is not UTF-8, an empty file.

Run names (:func:`read_runs`, ``run_names``): ``"tag"`` — the TREC tag; ``"file"`` — the file's name
without the ``input.`` prefix and the ``.gz .txt .run .res .tsv`` endings (:func:`run_name_from_file`);
``"auto"`` (default) — the tag when no other file given has the same tag, otherwise the file name, with
one notice listing the renamed runs. A run without a tag column (MS MARCO) is named by its file.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from bayeval.data.run import Run, RunSet
from bayeval.errors import BayevalInputError, DataNotice, FileFormatError
from bayeval.io._files import (
    data_lines,
    decode,
    first_data_line,
    first_line_fields,
    identifier,
    is_comment,
    line_numbers,
    quoted,
    read_bytes,
    scan_lines,
    split_lines,
)
from bayeval.io._numbers import as_integer, as_number
from bayeval.io.columnar import parse_msmarco, ranked_rows
from bayeval.progress import track

__all__ = ["RUN_NAME_RULES", "RunFile", "read_run", "read_run_files", "read_runs", "run_name_from_file",
           "run_file_names", "write_run"]

_COLUMNS = ["topic", "q0", "docno", "rank", "score", "tag"]
TREC, MSMARCO, MSMARCO_SCORE = "trec", "msmarco", "msmarco-score"
_LAYOUTS = {6: TREC, 3: MSMARCO, 4: MSMARCO_SCORE}
_LAYOUT_TEXT = {TREC: "'topic Q0 docno rank score tag'", MSMARCO: "'qid docid rank'",
                MSMARCO_SCORE: "'qid docid rank score'"}
RUN_NAME_RULES = ("auto", "tag", "file")
_NON_BLANK = re.compile(rb"[^ \t\n\r\x0b\x0c]")
_ENDINGS = (".gz", ".txt", ".run", ".res", ".tsv")


@dataclass(frozen=True)
class RunFile:
    """What reading one run file found (:func:`read_run_files`; ``bayeval check`` prints it).

    Attributes
    ----------
    path : str
    run : Run
        The run, named by the naming rule.
    tag : str or None
        The TREC tag of its first line (``None`` for MS MARCO files).
    layout : str
        ``"trec"``, ``"msmarco"`` (``qid docid rank``) or ``"msmarco-score"`` (``qid docid rank score``).
    duplicates : int
        Repeated (topic, document) lines dropped (0 when none).
    duplicate_line : int or None
        File line of the first dropped repetition.
    mixed_tags : bool
        Whether lines carry different tags.
    renamed : bool
        Whether the run is named by its file although it has a tag (a tag shared with another file).
    """

    path: str
    run: Run
    tag: str | None
    layout: str
    duplicates: int = 0
    duplicate_line: int | None = None
    mixed_tags: bool = False
    renamed: bool = False


def run_name_from_file(path: str | os.PathLike) -> str:
    """A run's name from its file: the name without an ``input.`` prefix and ``.gz .txt .run .res .tsv`` endings.

    Examples
    --------
    >>> run_name_from_file("runs/input.INQ603.gz"), run_name_from_file("bm25.run.txt")
    ('INQ603', 'bm25')
    """
    name = Path(path).name
    stripped = True
    while stripped:
        stripped = False
        for ending in _ENDINGS:
            if name.endswith(ending) and len(name) > len(ending):
                name, stripped = name[: -len(ending)], True
    if name.startswith("input.") and len(name) > len("input."):
        name = name[len("input."):]
    return name


def read_run(path: str | os.PathLike, name: str | None = None, *, strict: bool = False) -> Run:
    """Read one run file (TREC or MS MARCO layout, plain or gzip).

    Parameters
    ----------
    path : path-like
        The run file.
    name : str, optional
        The run's name (default: the tag of its first line; the file name when it has no tag).
    strict : bool, default False
        Refuse, with file and line, what is otherwise tolerated with a notice (a document listed twice
        for a topic, mixed tags).

    Returns
    -------
    Run

    Raises
    ------
    FileFormatError
        Naming the file and line of the first malformed line.
    """
    rf = _read_file(str(path), strict)
    _notify([rf])
    return rf.run if name is None else _renamed(rf.run, name)


def read_run_files(paths: str | os.PathLike | Iterable[str | os.PathLike], *, run_names: str = "auto",
                   strict: bool = False, threads: int = 2, progress: bool | None = None,
                   errors: list[str] | None = None) -> tuple[RunFile, ...]:
    """Read run files and say what was found in each; :func:`read_runs` without the per-file notices.

    Files given by name must be runs. In a directory, every regular file not starting with ``.`` is
    read, and a file whose first data line fits no run layout (a README, a runs.tsv table, a binary
    file) is skipped with a notice (``strict``: an error).

    Parameters
    ----------
    errors : list, optional
        When given, a file that cannot be read is left out and its one-line message appended here,
        instead of raising (``bayeval check`` reports every bad file at once).

    Returns
    -------
    tuple of RunFile
        In the order given (directories sorted by file name).
    """
    if run_names not in RUN_NAME_RULES:
        raise BayevalInputError(f"run_names: expected one of {', '.join(RUN_NAME_RULES)}, got {run_names!r}")
    files = _expand(paths)
    if not files:
        raise BayevalInputError("runs: no run files given")
    show = (len(files) > 20) if progress is None else progress

    def one(item: tuple[str, bool]) -> RunFile | str | BayevalInputError:
        path, listed = item
        try:
            if listed and not strict:
                data = read_bytes(path, strict=strict)
                if _layout_of(data) is None:
                    return path
                return _read_file(path, strict, data)
            return _read_file(path, strict)
        except BayevalInputError as exc:
            if errors is None:
                raise
            return exc

    if threads > 1 and len(files) > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            out = list(track(pool.map(one, files), total=len(files), description="reading runs",
                             enabled=None if show else False))
    else:
        out = [one(f) for f in track(files, description="reading runs", enabled=None if show else False)]
    skipped = [p for p in out if isinstance(p, str)]
    read = [rf for rf in out if isinstance(rf, RunFile)]
    if errors is not None:
        errors.extend(str(e) for e in out if isinstance(e, BayevalInputError))
    _skipped_notice(skipped)
    if not read:
        if errors:
            return ()
        where = Path(files[0][0]).parent if files[0][1] else files[0][0]
        raise BayevalInputError(f"{where}: no run files among the {len(files)} file(s) given")
    try:
        return _name_runs(read, run_names, strict)
    except BayevalInputError as exc:
        if errors is None:
            raise
        errors.append(str(exc))
        return ()


def read_runs(paths: str | os.PathLike | Iterable[str | os.PathLike], *, run_names: str = "auto",
              strict: bool = False, threads: int = 2, progress: bool | None = None) -> RunSet:
    """Read several runs: a list of files, or a directory (see :func:`read_run_files`).

    Files are decompressed and parsed on ``threads`` threads (the work happens in zlib
    and Arrow, which release the GIL). ``progress`` shows a bar (default: on a terminal,
    for more than 20 files). Each irregularity tolerated gives one :class:`~bayeval.errors.DataNotice`
    (module notes).

    Parameters
    ----------
    run_names : {"auto", "tag", "file"}
        The naming rule (module notes).
    strict : bool
        Make every tolerated irregularity an error naming file and line.

    Raises
    ------
    BayevalInputError
        When two runs end up with the same name (naming both files), or a file is malformed.
    """
    files = read_run_files(paths, run_names=run_names, strict=strict, threads=threads, progress=progress)
    _notify(files)
    return RunSet(tuple(rf.run for rf in files))


def write_run(run: Run, path: str | os.PathLike, tag: str | None = None) -> None:
    """Write ``run`` as a TREC run file (ranks 1.., trec_eval order)."""
    frame = run.to_frame()
    with open(path, "w", encoding="utf-8") as fh:
        for t, d, r, s in zip(frame["topic"], frame["docno"], frame["rank"], frame["score"], strict=True):
            fh.write(f"{t} Q0 {d} {r} {s!r} {tag or run.name}\n")


# ---------------------------------------------------------------------- files, naming and notices
def _expand(paths) -> list[tuple[str, bool]]:
    """``(path, from a directory)`` of every file named or in a directory named (sorted, no dot files)."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    files: list[tuple[str, bool]] = []
    for item in items:
        q = Path(item)
        if q.is_dir():
            files.extend((str(x), True) for x in sorted(q.iterdir()) if x.is_file() and not x.name.startswith("."))
        else:
            files.append((str(q), False))
    return files


def _skipped_notice(skipped: Sequence[str]) -> None:
    if skipped:
        shown = ", ".join(Path(p).name for p in skipped[:5]) + (" …" if len(skipped) > 5 else "")
        warnings.warn(f"{Path(skipped[0]).parent}: skipped {len(skipped)} file(s) that are not runs: {shown}",
                      DataNotice, stacklevel=3)


def _renamed(run: Run, name: str) -> Run:
    return run if run.name == name else Run(name, run.topics, run.offsets, run.docno_array, run.scores)


def _name_runs(files: Sequence[RunFile], rule: str, strict: bool) -> tuple[RunFile, ...]:
    names = _names([(rf.path, rf.tag) for rf in files], rule, strict)
    return tuple(RunFile(rf.path, _renamed(rf.run, name), rf.tag, rf.layout, rf.duplicates, rf.duplicate_line,
                         rf.mixed_tags, renamed) for rf, (name, renamed) in zip(files, names, strict=True))


def _names(files: Sequence[tuple[str, str | None]], rule: str, strict: bool) -> list[tuple[str, bool]]:
    """``(name, renamed)`` of each ``(path, tag)`` under the naming rule (module notes)."""
    by_tag: dict[str, list[str]] = {}
    for path, tag in files:
        if tag is not None:
            by_tag.setdefault(tag, []).append(path)
    out, where = [], {}
    for path, tag in files:
        shared = tag is not None and len(by_tag[tag]) > 1
        if tag is None or rule == "file" or (rule == "auto" and shared):
            if strict and rule == "auto" and shared:
                other = next(q for q in by_tag[tag] if q != path)
                raise BayevalInputError(f"{path}: run tag {quoted(tag)} is also the tag of {other} "
                                        "(strict; --run-names file names runs by their files)")
            name = run_name_from_file(path)
        else:
            name = tag
        if name in where:
            hint = "" if rule == "file" else "; --run-names file names runs by their files"
            raise BayevalInputError(f"runs: two runs are named {quoted(name)} ({where[name]} and {path}){hint}")
        where[name] = path
        out.append((name, tag is not None and name != tag and rule == "auto"))
    return out


def run_file_names(paths: str | os.PathLike | Iterable[str | os.PathLike], run_names: str = "auto"
                   ) -> list[tuple[str, str]]:
    """``(name, path)`` of each run file, named as :func:`read_runs` names them, from first data lines only.

    For readers that read runs lazily (the simulation studies), so that a run has one name everywhere.
    Files in directories whose first data line fits no run layout are skipped with one notice.
    """
    if run_names not in RUN_NAME_RULES:
        raise BayevalInputError(f"run_names: expected one of {', '.join(RUN_NAME_RULES)}, got {run_names!r}")
    pairs, skipped = [], []
    for path, listed in _expand(paths):
        line = first_data_line(path)
        if listed and _layout_of(line) is None:
            skipped.append(path)
            continue
        fields = line.split()
        pairs.append((path, fields[5].decode("utf-8", "replace") if len(fields) == 6 else None))
    _skipped_notice(skipped)
    names = _names(pairs, run_names, False)
    _renamed_notice([(tag, name) for (name, renamed), (_, tag) in zip(names, pairs, strict=True) if renamed])
    return [(name, path) for (name, _), (path, _) in zip(names, pairs, strict=True)]


def _notify(files: Sequence[RunFile]) -> None:
    """One notice per file for each irregularity tolerated, one for all renamed runs."""
    for rf in files:
        if rf.duplicates:
            warnings.warn(f"{rf.path}:{rf.duplicate_line}: {rf.duplicates} repeated document(s) within a topic; "
                          "kept the first in ranked order (trec_eval refuses such files)", DataNotice, stacklevel=3)
        if rf.mixed_tags:
            warnings.warn(f"{rf.path}: lines carry different run tags; using the first, {quoted(rf.tag)}", DataNotice,
                          stacklevel=3)
    _renamed_notice([(rf.tag, rf.run.name) for rf in files if rf.renamed])


def _renamed_notice(renamed: Sequence[tuple[str, str]]) -> None:
    if renamed:
        shown = ", ".join(f"{tag} → {name}" for tag, name in renamed[:6]) + (" …" if len(renamed) > 6 else "")
        warnings.warn(f"runs: {len(renamed)} run(s) share their tag with another file and are named by their file: "
                      f"{shown}", DataNotice, stacklevel=3)


# ---------------------------------------------------------------------- parsing
@dataclass
class _Parsed:
    layout: str
    tag: str | None
    topics: list
    starts: np.ndarray
    docnos: object
    scores: np.ndarray
    mixed: bool
    duplicates: int = 0
    duplicate_line: int | None = None
    dropped: np.ndarray | None = None  # the Arrow paths: data lines (0-based) dropped as repeats
    repeat: tuple | None = None  # strict Arrow paths: the first repeat in file order (see ranked_rows)
    tag_row: int | None = None  # TREC Arrow path: the first data line whose tag differs from the first's
    other_tag: str | None = None  # and its tag


def _layout_of(data: bytes) -> str | None:
    """The layout of the first data line, or ``None`` when it fits none (not a run file)."""
    for raw in split_lines(data[:65536]):
        if is_comment(raw):
            continue
        fields = raw.split()
        layout = _LAYOUTS.get(len(fields))
        if layout == TREC:
            fits = as_number(fields[4]) is not None
        else:
            fits = layout is not None and as_integer(fields[2]) is not None and (
                layout == MSMARCO or as_number(fields[3]) is not None)
        try:
            for f in fields:
                f.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return layout if fits else None
    return None


def _read_file(path: str, strict: bool, data: bytes | None = None) -> RunFile:
    data = read_bytes(path, strict=strict) if data is None else data
    if _NON_BLANK.search(data) is None:  # blank throughout (a search, not a stripped copy of the file)
        raise FileFormatError(path, None, "empty file: no ranking lines")
    p = _parse_arrow(data, path, strict)
    if p is None:
        p = _parse_checked(data, path, strict)
    name = p.tag if p.tag is not None else run_name_from_file(path)
    run = Run._from_sorted(name, p.topics, p.starts, p.docnos, p.scores)
    return RunFile(path, run, p.tag, p.layout, p.duplicates, p.duplicate_line, p.mixed)


def _parse_arrow(data: bytes, path: str, strict: bool) -> _Parsed | None:
    """The Arrow readers, for every file whose data lines are plainly well formed (module notes); ``None``: the
    careful parser decides. Comment and blank lines are dropped first (a copy, only when there are some), a
    repeated document is dropped after ranking, a second tag noted; their notes and strict errors name the same
    lines as the careful parser's."""
    sep, plain, skipped = scan_lines(data)
    if sep is None or not plain:
        return None
    text = data_lines(data) if skipped else data
    n_cols = first_line_fields(text)
    if n_cols == 6:
        p = _parse_fast(text, sep, strict)
    elif n_cols in (3, 4):
        c = parse_msmarco(text, separator=sep, strict=strict)
        p = None if c is None else _Parsed(c.layout, None, c.topics, c.starts, c.docnos, c.scores, False,
                                           dropped=c.dropped, repeat=c.repeat)
    else:
        p = None
    del text
    if p is None:
        return None
    if strict and (p.tag_row is not None or p.repeat is not None):
        _strict_error(data, path, p)
    if p.dropped is not None and len(p.dropped):
        p.duplicates = len(p.dropped)
        p.duplicate_line = int(line_numbers(data, p.dropped[:1])[0])
    return p


def _strict_error(data: bytes, path: str, p: _Parsed) -> None:
    """The careful parser's strict error for a file the Arrow path read: the earlier of the first line with a
    second tag and the first repeated document in file order (on one line, the tag is named)."""
    tag_row = p.tag_row if p.tag_row is not None else np.iinfo(np.int64).max
    rep_row = p.repeat[0] if p.repeat is not None else np.iinfo(np.int64).max
    if tag_row <= rep_row:
        first, line = line_numbers(data, [0, tag_row])
        raise FileFormatError(path, int(line), f"run tag {quoted(p.other_tag)} differs from {quoted(p.tag)} of line "
                                               f"{int(first)} (strict)")
    row, earlier, topic, docno = p.repeat
    line, before = line_numbers(data, [row, earlier])
    raise FileFormatError(path, int(line), f"document {quoted(docno)} already listed for topic {quoted(topic)} on "
                                           f"line {int(before)} (strict)")


def _parse_fast(data: bytes, sep: str, strict: bool) -> _Parsed | None:
    """The Arrow reader of the TREC layout, for data lines only (:func:`_parse_arrow`); ``None`` when the careful
    parser must decide (a field Arrow cannot convert, a score that is not finite, another column count)."""
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),  # zero-copy, read by Arrow without the GIL
            read_options=pcsv.ReadOptions(column_names=_COLUMNS, use_threads=True),
            parse_options=pcsv.ParseOptions(delimiter=sep, quote_char=False, double_quote=False),
            convert_options=pcsv.ConvertOptions(
                column_types={"topic": pa.string(), "docno": pa.string(), "score": pa.float64(), "tag": pa.string()},
                include_columns=["topic", "docno", "score", "tag"],  # Q0 and the rank are ignored (trec_eval)
                strings_can_be_null=False,
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
    names = topic_enc.dictionary.to_pylist()
    tags = table.column("tag").combine_chunks()
    tag = tags[0].as_py()
    differs = pc.not_equal(tags, tag)
    mixed = pc.any(differs).as_py()
    tag_row = other = None
    if mixed:
        tag_row = int(pc.index(differs, True).as_py())
        other = tags[tag_row].as_py()
    docnos = table.column("docno").combine_chunks()
    del table, tags, differs
    # rows grouped by topic, score descending, docno descending (the careful parser's order), repeats left out
    ranked = ranked_rows(topic_enc.indices.to_numpy(), scores, docnos, first_repeat=strict)
    docnos, scores, topics, repeat = ranked.take(docnos, scores, names)
    return _Parsed(TREC, tag, topics, ranked.starts, docnos, scores, bool(mixed), dropped=ranked.dropped,
                   repeat=repeat, tag_row=tag_row, other_tag=other)


def _parse_checked(data: bytes, path: str, strict: bool) -> _Parsed:
    """Line-by-line parser: every layout, comments, duplicates; exact errors with line numbers."""
    topics_col: list[str] = []
    docnos_col: list[str] = []
    scores_col: list[float] = []
    lines_col: list[int] = []
    seen: dict[tuple[str, str], int] | None = {} if strict else None
    layout = tag = None
    first = 0
    mixed = False
    for lineno, raw in enumerate(split_lines(data), start=1):
        if is_comment(raw):
            continue
        fields = raw.split()
        if layout is None:
            layout, first = _LAYOUTS.get(len(fields)), lineno
            if layout is None:
                raise FileFormatError(path, lineno, f"expected 6 columns 'topic Q0 docno rank score tag' (TREC) or "
                                                    f"3 or 4 'qid docid rank [score]' (MS MARCO), found {len(fields)}")
        elif len(fields) != len(_LAYOUTS_BY_NAME[layout]):
            raise FileFormatError(path, lineno, f"expected {len(_LAYOUTS_BY_NAME[layout])} columns "
                                                f"{_LAYOUT_TEXT[layout]} as on line {first}, found {len(fields)}")
        topic = identifier(fields[0], "topic", path, lineno)
        if layout == TREC:
            docno = identifier(fields[2], "docno", path, lineno)
            score = _number(fields[4], "score", path, lineno)
            if not np.isfinite(score):
                raise FileFormatError(path, lineno, f"score {quoted(fields[4])} is not a finite number")
            t = decode(fields[5], path, lineno)
            if tag is None:
                tag = t
            elif t != tag:
                if strict:
                    raise FileFormatError(path, lineno, f"run tag {quoted(t)} differs from {quoted(tag)} of line "
                                                        f"{first} (strict)")
                mixed = True
        else:
            docno = identifier(fields[1], "docno", path, lineno)
            rank = as_integer(fields[2])
            try:
                score = -float(rank)
            except (TypeError, OverflowError):
                raise FileFormatError(path, lineno, f"rank {quoted(fields[2])} is not an integer") from None
            if layout == MSMARCO_SCORE:
                _number(fields[3], "score", path, lineno)
        if seen is not None:
            key = (topic, docno)
            if key in seen:
                raise FileFormatError(path, lineno, f"document {quoted(docno)} already listed for topic "
                                                    f"{quoted(topic)} on line {seen[key]} (strict)")
            seen[key] = lineno
        topics_col.append(topic)
        docnos_col.append(docno)
        scores_col.append(score)
        lines_col.append(lineno)
    if layout is None:
        raise FileFormatError(path, None, "empty file: no ranking lines")
    topic_arr = np.array(topics_col, dtype=object)
    docno_arr = np.array(docnos_col, dtype=object)
    score_arr = np.array(scores_col, dtype=np.float64)
    line_arr = np.array(lines_col, dtype=np.int64)
    # object arrays of str sort by code point, which is UTF-8 byte order (trec_eval's strcmp)
    t_uniq, t_code = np.unique(topic_arr, return_inverse=True)
    _, d_code = np.unique(docno_arr, return_inverse=True)
    order = np.lexsort((-d_code, -score_arr, t_code))
    # a document repeated within a topic: keep its first occurrence in ranked order (the file's first
    # line among equal (score, docno) rows, as lexsort is stable)
    key = t_code[order].astype(np.int64) * (int(d_code.max()) + 1) + d_code[order]
    _, first_pos = np.unique(key, return_index=True)
    duplicates, dup_line = 0, None
    if len(first_pos) < len(order):
        keep = np.zeros(len(order), dtype=bool)
        keep[first_pos] = True
        duplicates, dup_line = int((~keep).sum()), int(line_arr[order[~keep]].min())
        order = order[keep]
    t_sorted = t_code[order]
    starts = np.flatnonzero(np.r_[True, t_sorted[1:] != t_sorted[:-1]])
    return _Parsed(layout, tag, [str(t_uniq[t_sorted[s]]) for s in starts], starts, docno_arr[order],
                   score_arr[order], mixed, duplicates, dup_line)


_LAYOUTS_BY_NAME = {TREC: _COLUMNS, MSMARCO: ["topic", "docno", "rank"],
                    MSMARCO_SCORE: ["topic", "docno", "rank", "score"]}


def _number(field: bytes, what: str, path: str, lineno: int) -> float:
    value = as_number(field)
    if value is None:
        raise FileFormatError(path, lineno, f"{what} {quoted(field)} is not a number")
    return value
