"""The tidy trial table: one row per trial × pair × method × confidence method, in parquet or csv.

Read and written by :mod:`bayeval.io.trials` (its columns, formats and resuming rules are described there; all file
reading is in ``bayeval.io``); re-exported here.
"""

from bayeval.io.trials import COLUMNS, FORMATS, completed_trials, read_table, table_format, write_table

__all__ = ["COLUMNS", "FORMATS", "completed_trials", "read_table", "table_format", "write_table"]
