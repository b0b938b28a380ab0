"""Reading and writing every file bayeval takes: runs, qrels, prels, probabilities, judgments, stratified samples,
texts and topics (the judging page's sources), run tables, pool files, design files, trial tables, test collections
(:func:`load_collection`), Cranfield; runs one at a time (:func:`iter_runs`) and into a rank cube
(:func:`read_rank_cube`).

All file reading lives here (docs/data.md lists the formats and the irregularities each reader
tolerates). The helpers :func:`read_bytes`, :func:`read_text` and :func:`split_lines` are public for
readers of other formats, with :func:`decode` (a field as UTF-8, or an error naming file and line) and
:func:`is_comment` (blank and ``#`` lines), :func:`identifier` (a topic id or docno, control characters refused)
and :func:`quoted` (a field quoted in a message, at most 80 characters).
"""

from bayeval.io._files import decode, identifier, is_comment, quoted, read_bytes, read_text, split_lines
from bayeval.io.check import CollectionCheck, LabelCheck, check_collection, check_labels
from bayeval.io.collection import TestCollection, load_collection
from bayeval.io.cranfield import read_cranfield
from bayeval.io.frames import (
    qrels_from_frame,
    qrels_from_records,
    qrels_to_frame,
    runs_from_frame,
    runs_from_records,
    runs_to_frame,
)
from bayeval.io.judgments import JudgmentLine, read_judgments
from bayeval.io.labels import labels_name, read_labels
from bayeval.io.pools import Contributions, RunGroups, read_contributions, read_run_groups
from bayeval.io.probabilities import read_probabilities, write_probabilities
from bayeval.io.qrels import parse_grade, read_prels, read_qrels, write_qrels
from bayeval.io.rankcube import iter_runs, read_rank_cube
from bayeval.io.runs import read_run, read_runs, write_run
from bayeval.io.sampled import match_sample_topics, read_stratified_sample, write_stratified_sample
from bayeval.io.tables import manual_runs, read_run_table
from bayeval.io.texts import read_embeddings, read_texts

__all__ = [
    "CollectionCheck",
    "Contributions",
    "JudgmentLine",
    "LabelCheck",
    "RunGroups",
    "TestCollection",
    "check_collection",
    "check_labels",
    "decode",
    "identifier",
    "is_comment",
    "iter_runs",
    "labels_name",
    "load_collection",
    "manual_runs",
    "match_sample_topics",
    "parse_grade",
    "qrels_from_frame",
    "qrels_from_records",
    "qrels_to_frame",
    "quoted",
    "read_bytes",
    "read_contributions",
    "read_cranfield",
    "read_embeddings",
    "read_judgments",
    "read_labels",
    "read_prels",
    "read_probabilities",
    "read_qrels",
    "read_rank_cube",
    "read_run",
    "read_run_groups",
    "read_run_table",
    "read_runs",
    "read_stratified_sample",
    "read_text",
    "read_texts",
    "runs_from_frame",
    "runs_from_records",
    "runs_to_frame",
    "split_lines",
    "write_probabilities",
    "write_qrels",
    "write_run",
    "write_stratified_sample",
]
