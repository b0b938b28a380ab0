"""StringCodes against a Python dict: codes in order of first appearance, across calls and table growth."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from bayeval.data.interning import StringCodes, repeat_mask, repeats_within_groups


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


def test_lookup_finds_coded_strings_and_adds_none():
    sc = StringCodes()
    sc.code(pa.array(["a", "bb", "é"]))
    got = sc.lookup(pa.array(["é", "zz", "a", "", "bb"], type=pa.large_string()))
    np.testing.assert_array_equal(got, [2, -1, 0, -1, 1])
    assert len(sc) == 3


def test_code_lists_matches_coding_rows_one_by_one():
    """Lists laid on matrix rows: the first code_depth coded as code() codes them, deeper ones only if known."""
    rng = np.random.default_rng(3)
    words = [f"w{x}" for x in rng.integers(0, 60, 400)]
    starts = np.r_[0, np.sort(rng.choice(np.arange(1, 400), 29, replace=False))]
    rows = rng.permutation(40)[:30]
    rows[5] = -1  # a list whose topic is not kept
    width, code_depth = 12, 4
    sc = StringCodes()
    assert sc.code(pa.array(["k1", "k2", "w1", "w2"])).tolist() == [0, 1, 2, 3]  # the four known codes
    ref_codes = {"k1": 0, "k2": 1, "w1": 2, "w2": 3}
    ref = np.full((40, width), -7, dtype=np.int64)
    for g, lo in enumerate(starts):
        hi = starts[g + 1] if g + 1 < len(starts) else len(words)
        if rows[g] < 0:
            continue
        for r, w in enumerate(words[lo:min(hi, lo + width)]):
            if r < code_depth:
                ref[rows[g], r] = ref_codes.setdefault(w, len(ref_codes))
            else:
                c = ref_codes.get(w, -2)
                ref[rows[g], r] = c if 0 <= c < 4 else -2
    out = np.full((40, width), -7, dtype=np.int32)
    sc.code_lists(pa.array(words), starts, rows, out, code_depth=code_depth, known=4, other=-2)
    np.testing.assert_array_equal(out, ref)
    assert sc.strings().to_pylist() == list(ref_codes)


def test_repeats_within_groups_against_sets():
    rng = np.random.default_rng(5)
    for trial in range(200):
        n = int(rng.integers(1, 40))
        words = [f"d{x}" for x in rng.integers(0, 25, n)]
        starts = np.r_[0, np.sort(rng.choice(np.arange(1, n + 1), min(n, int(rng.integers(0, 5))), replace=False))]
        starts = np.unique(starts[starts < n])
        rows = rng.permutation(n) if trial % 2 else None
        seq = [words[i] for i in (range(n) if rows is None else rows)]
        want = -1
        for g, lo in enumerate(starts):
            hi = starts[g + 1] if g + 1 < len(starts) else n
            seen = set()
            for k in range(lo, hi):
                if seq[k] in seen:
                    want = k
                    break
                seen.add(seq[k])
            if want >= 0:
                break
        assert repeats_within_groups(pa.array(words), starts, rows=rows) == want


def test_repeat_mask_against_sets():
    rng = np.random.default_rng(6)
    for trial in range(200):
        n = int(rng.integers(1, 40))
        words = [f"d{x}" for x in rng.integers(0, 25, n)]
        starts = np.r_[0, np.sort(rng.choice(np.arange(1, n + 1), min(n, int(rng.integers(0, 5))), replace=False))]
        starts = np.unique(starts[starts < n])
        rows = rng.permutation(n) if trial % 2 else None
        seq = [words[i] for i in (range(n) if rows is None else rows)]
        want = []
        for g, lo in enumerate(starts):
            hi = starts[g + 1] if g + 1 < len(starts) else n
            seen = set()
            for k in range(lo, hi):
                want.append(seq[k] in seen)
                seen.add(seq[k])
        assert repeat_mask(pa.array(words), starts, rows=rows).tolist() == want
