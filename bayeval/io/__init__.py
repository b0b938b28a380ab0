"""Reading and writing every file bayeval takes: runs, qrels, prels, probabilities, texts, run tables.

All file reading lives here (docs/data.md lists the formats and the irregularities each reader
tolerates). The helpers :func:`read_bytes`, :func:`read_text` and :func:`split_lines` are public for
readers of other formats.
"""

from bayeval.io._files import read_bytes, read_text, split_lines
from bayeval.io.probabilities import read_probabilities, write_probabilities
from bayeval.io.qrels import read_prels, read_qrels, write_qrels
from bayeval.io.runs import read_run, read_runs, write_run
from bayeval.io.texts import read_embeddings, read_texts

__all__ = [
    "read_bytes",
    "read_embeddings",
    "read_prels",
    "read_probabilities",
    "read_qrels",
    "read_run",
    "read_runs",
    "read_text",
    "read_texts",
    "split_lines",
    "write_probabilities",
    "write_qrels",
    "write_run",
]
