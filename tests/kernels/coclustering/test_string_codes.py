"""The string-label hash table (kernels/coclustering/string_codes.py) against a dict, through its growth.

The compiled loop stops when its key store or its table is full and
resumes after numpy grows them; every stop must leave the codes exact and
in order of first appearance.  The oracle is a Python dict of row tuples.
"""

from __future__ import annotations

import numpy as np
import pytest

from daskbicl.engine.labels import _UNROLLED, _WEIGHTS
from daskbicl.kernels.coclustering.string_codes import pair_codes, row_codes


def _oracle(rows: np.ndarray) -> tuple[list[int], list[int]]:
    seen: dict[tuple, int] = {}
    codes, first = [], []
    for i, row in enumerate(map(tuple, rows.tolist())):
        if row not in seen:
            seen[row] = len(seen)
            first.append(i)
        codes.append(seen[row])
    return codes, first


def _weights(width: int):
    weights = np.resize(_WEIGHTS, width)
    return tuple(int(w) for w in weights) if width <= _UNROLLED else weights


@pytest.mark.parametrize("width", [1, 2, 3, 6, 9, 13])
@pytest.mark.parametrize("distinct", [1, 63, 64, 65, 511, 513, 3000])
def test_row_codes_match_a_dict_through_every_growth(width, distinct):
    rng = np.random.default_rng(width * 10007 + distinct)
    vocab = rng.integers(0, 3, (distinct, width), dtype=np.uint32)  # few word values: rows share prefixes
    vocab[:, 0] = np.arange(distinct, dtype=np.uint32)  # distinct rows, all of them
    rng.shuffle(vocab)
    words = np.ascontiguousarray(vocab[rng.integers(0, distinct, 4 * distinct + 50)])
    codes, first = row_codes(words, _weights(width))
    want_codes, want_first = _oracle(words)
    assert codes.dtype == np.int64 and first.dtype == np.int64
    assert codes.tolist() == want_codes and first.tolist() == want_first


def test_row_codes_with_colliding_hashes_are_still_exact():
    """Weights of zero give every row of one width the same hash: every insert probes; codes stay exact."""
    rng = np.random.default_rng(5)
    words = rng.integers(0, 40, (3000, 3), dtype=np.uint32)
    words[:, 1:] = 0  # with zero weights the NH hash is w0*w1 + 0 = 0 for every row
    codes, first = row_codes(words, (0, 0, 0))
    assert (codes.tolist(), first.tolist()) == _oracle(words)


@pytest.mark.parametrize("distinct", [1, 64, 65, 600, 5000])
def test_pair_codes_match_a_dict_through_every_growth(distinct):
    rng = np.random.default_rng(distinct)
    vocab = rng.integers(0, 2**64, (distinct, 2), dtype=np.uint64, endpoint=False)
    words = np.ascontiguousarray(vocab[rng.integers(0, distinct, 3 * distinct + 20)])
    codes, first = pair_codes(words)
    assert (codes.tolist(), first.tolist()) == _oracle(words)


def test_empty_inputs():
    codes, first = row_codes(np.empty((0, 4), np.uint32), _weights(4))
    assert codes.size == 0 and first.size == 0
    codes, first = pair_codes(np.empty((0, 2), np.uint64))
    assert codes.size == 0 and first.size == 0


# --- short Latin-1 strings coded as integers (engine/spread_labels.narrow_string_codes) ---


def _strings_of(rng, n: int, width: int, distinct: int, alphabet: str) -> np.ndarray:
    """``n`` strings of up to ``width`` characters drawn from ``distinct`` random ones (with empty and
    shorter strings, so NUL padding is exercised)."""
    letters = np.array(list(alphabet))
    pool = ["".join(rng.choice(letters, rng.integers(0, width + 1))) for _ in range(distinct)]
    return np.array(pool, dtype=f"U{width}")[rng.integers(0, distinct, n)]


@pytest.mark.parametrize("width", [1, 3, 6, 8])
@pytest.mark.parametrize("distinct", [5, 700, 5000])
def test_narrow_strings_match_np_unique(width, distinct):
    from daskbicl.engine.spread_labels import SLOT_KERNEL_MIN, narrow_string_codes

    rng = np.random.default_rng(width * 7919 + distinct)
    values = _strings_of(rng, SLOT_KERNEL_MIN + 4321, width, distinct, "ab\u00e9\u00ff0_")
    got = narrow_string_codes(values)
    assert got is not None
    codes, uniques = got
    assert uniques[codes].tolist() == values.tolist()
    assert len(set(uniques.tolist())) == uniques.size == np.unique(values).size  # one code per distinct string


def test_narrow_strings_refuse_wide_strings_and_other_characters():
    from daskbicl.engine.spread_labels import SLOT_KERNEL_MIN, narrow_string_codes

    rng = np.random.default_rng(3)
    values = _strings_of(rng, SLOT_KERNEL_MIN + 10, 4, 50, "abc")
    assert narrow_string_codes(values.astype("U9")) is None  # nine characters: the word hash table
    small = narrow_string_codes(values[:100])  # small chunks too (the caller sends chunks of 4096 or more)
    assert small is not None and small[1][small[0]].tolist() == values[:100].tolist()
    for where in (0, values.size // 2, values.size - 1):  # a character above 255 anywhere, sampled or not
        other = values.copy()
        other[where] = "a\u0100"
        assert narrow_string_codes(other) is None
    from daskbicl.engine.labels import _factorize_fixed_width

    other[values.size // 3] = "\u4e2d"
    codes, uniques = _factorize_fixed_width(other)  # the fallback is exact too
    assert uniques[codes].tolist() == other.tolist()
