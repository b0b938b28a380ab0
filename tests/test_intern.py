"""StringCodes against a Python dict: codes in order of first appearance, across calls and table growth."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from bayeval.data.interning import StringCodes


def test_codes_match_a_dict_across_growth_and_slices():
    rng = np.random.default_rng(0)
    sc, ref = StringCodes(), {}
    for n in (10, 3000, 50_000):
        words = [f"d{x}" if x % 7 else f"é{x}" for x in rng.integers(0, 40_000, n)] + [""]
        arr = pa.array(["pad"] + words, type=pa.string()).slice(1)  # a sliced array (non-zero offset)
        got = sc.code(arr)
        want = [ref.setdefault(w, len(ref)) for w in words]
        np.testing.assert_array_equal(got, want)
    assert sc.strings().to_pylist() == list(ref)
