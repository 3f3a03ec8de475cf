"""The counting pass against a brute-force Counter, on every path it can take.

A chunk is counted densely (one bincount), after rank-coding a side spread
over a wide range (a sample's sorted labels looked up in a hash table, the
labels it missed hashed after them), or by hashing the pair keys (many
distinct pairs; both sides compacted first when the keys would overflow).
Partial results are merged by addition (dense), by a sort (few pairs) or by
hashing the pair keys (many pairs).  Whatever the path, the contingency
table must equal ``collections.Counter(zip(truth, pred))`` exactly.
"""

from __future__ import annotations

from collections import Counter

import dask.array as da
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import daskbicl
from daskbicl.engine import labels as L
from daskbicl.engine.contingency_pass import contingency_graph
from daskbicl.kernels.coclustering.contingency import DenseCounts, PairCounts, count_pairs


def _counter(pairs) -> Counter:
    p = pairs.to_pairs()
    out: Counter = Counter()
    for t, q, c in zip(p.truth.tolist(), p.pred.tolist(), p.count.tolist()):
        out[(t, q)] += c
    return out


def _table_counter(table) -> Counter:
    return Counter({(table.truth_labels[r].item(), table.pred_labels[c].item()): int(n)
                    for r, c, n in zip(table.rows, table.cols, table.counts)})


SPREADS = {
    "compact": lambda c: c,
    "offset": lambda c: c + 10**12,
    "spread": lambda c: c * 1_000_003 + 7,
    "hashes": lambda c: (c.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)).view(np.int64) & np.int64(2**63 - 1),
    "near 2**63": lambda c: np.int64(2**63 - 1) - c,
}


@st.composite
def label_arrays(draw):
    n = draw(st.integers(1, 3000))
    k = draw(st.sampled_from([1, 3, 50, 2000]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, k, n)
    spread = draw(st.sampled_from(sorted(SPREADS)))
    dtype = draw(st.sampled_from(["int64", "uint64", "int32", "uint8"]))
    values = SPREADS[spread](codes)
    if dtype != "int64":
        info = np.iinfo(dtype)
        if values.max() > info.max:
            values = codes
        values = values.astype(dtype)
    if draw(st.booleans()) and values.dtype.kind == "i":
        values = np.where(rng.random(n) < 0.05, -1 - rng.integers(0, 3, n), values).astype(values.dtype)
    return values


@given(truth=label_arrays(), pred=label_arrays(), chunk=st.integers(1, 4000))
@settings(max_examples=120, deadline=None)
def test_counting_equals_a_counter_on_every_path(truth, pred, chunk):
    n = min(truth.size, pred.size)
    truth, pred = truth[:n], pred[:n]
    want = Counter(zip(np.maximum(truth.astype(object), -1).tolist(), np.maximum(pred.astype(object), -1).tolist()))
    assert _counter(L.count_labels(truth, pred, ("t", "p"))) == want
    parts = [L.count_labels(truth[i:i + chunk], pred[i:i + chunk], ("t", "p")) for i in range(0, n, chunk)]
    assert _counter(L.merge_labelled(*parts)) == want
    # the numpy-only kernel defaults (sorting) agree
    assert _counter(count_pairs(truth, pred, unassigned=True)) == want


def test_spread_labels_the_sample_misses_are_counted():
    """A label present once, far from the sample's points, gets a code after the sample's."""
    rng = np.random.default_rng(1)
    truth = rng.integers(0, 5, 100_000) * 1_000_003 + 7
    truth[12_345] = 2**61  # missed by the sample of every 24th label
    pred = rng.integers(0, 3, 100_000) * 999_999_937
    codes, uniques = L.rank_codes(truth)
    np.testing.assert_array_equal(uniques[codes], truth)
    assert _counter(L.count_labels(truth, pred, ("t", "p"))) == Counter(zip(truth.tolist(), pred.tolist()))


def test_many_distinct_pairs_are_hashed_and_merged_exactly():
    rng = np.random.default_rng(2)
    n, k = 200_000, 50_000
    truth = rng.integers(0, k, n)
    pred = np.where(rng.random(n) < 0.3, rng.integers(0, k, n), truth * 7 % k)
    part = L.count_labels(truth[: n // 2], pred[: n // 2], ("t", "p"))
    assert isinstance(part, PairCounts) and part.count.size > L._HASH_MERGE
    merged = L.merge_labelled(part, L.count_labels(truth[n // 2:], pred[n // 2:], ("t", "p")))
    assert _counter(merged) == Counter(zip(truth.tolist(), pred.tolist()))


def test_keys_that_would_overflow_compact_both_sides():
    rng = np.random.default_rng(3)
    n = 50_000
    truth = rng.integers(0, 2**62, n)  # every label distinct and spread: keys cannot be t*width+p
    pred = rng.integers(0, 2**62, n)
    got = L.count_labels(truth, pred, ("t", "p"))
    assert _counter(got) == Counter(zip(truth.tolist(), pred.tolist()))
    merged = L.merge_labelled(got, L.count_labels(pred, truth, ("t", "p")))
    assert _counter(merged) == Counter(zip(truth.tolist(), pred.tolist())) + Counter(zip(pred.tolist(), truth.tolist()))


def test_dense_parts_merge_densely():
    a = L.count_labels(np.array([0, 1, 1]), np.array([2, 2, 3]), ("t", "p"))
    b = L.count_labels(np.array([5, 1]), np.array([0, 3]), ("t", "p"))
    assert isinstance(a, DenseCounts) and isinstance(L.merge_labelled(a, b), DenseCounts)


@pytest.mark.parametrize("spread", sorted(SPREADS))
def test_dask_chunked_tables_equal_the_counter(spread):
    rng = np.random.default_rng(4)
    codes_t, codes_p = rng.integers(0, 40, 30_000), rng.integers(0, 3000, 30_000)
    truth, pred = SPREADS[spread](codes_t), SPREADS["spread"](codes_p)
    graph = contingency_graph(da.from_array(truth, chunks=7_001), da.from_array(pred, chunks=5_000))
    table = graph.compute()
    assert _table_counter(table) == Counter(zip(truth.tolist(), pred.tolist()))
    assert list(table.truth_labels) == sorted(set(truth.tolist()))


@pytest.mark.parametrize("spread", ["compact", "offset", "spread"])
def test_spread_labels_score_exactly_like_compact_ones(spread):
    rng = np.random.default_rng(5)
    z, zp = rng.integers(0, 30, 20_000), rng.integers(0, 30, 20_000)
    w, wp = rng.integers(0, 5, 700), rng.integers(0, 6, 700)
    f = SPREADS[spread]  # increasing: the tables keep their order, so the scores agree to the last bit
    assert daskbicl.score((f(z), f(w)), (f(zp), f(wp))) == daskbicl.score((z, w), (zp, wp))


STRINGS = ["", "a", "a\x00", "ab", "é", "cluster_007", "x" * 15, "y" * 16,
           "a long label that numpy keeps outside the element " * 2, "ß-cell"]


@pytest.mark.parametrize("forms", [None, 0.0])
def test_string_dtype_words_give_exact_codes(monkeypatch, forms):
    """StringDType chunks are coded by their stored words (then merged by value); forms=0 sends
    every chunk to the character path (ASCII bytes of each string with a final ".", else by value)."""
    if forms is not None:
        monkeypatch.setattr(L, "_FORMS", forms)
    rng = np.random.default_rng(7)
    words = np.array(STRINGS, dtype=object)[rng.integers(0, len(STRINGS), 30_000)]
    words[rng.integers(0, 30_000, 5)] = "rare, missed by the sample"
    arr = words.astype(np.dtypes.StringDType())
    # equal long strings stored apart (two arrays' arenas) are one label
    arr = np.concatenate([arr[:15_000], words[15_000:].astype(np.dtypes.StringDType())])
    codes, uniques = L.encode_chunk(arr, "t")
    assert uniques.dtype == object and len(set(uniques.tolist())) == uniques.size
    np.testing.assert_array_equal(uniques[codes], words)
    pred = rng.integers(0, 4, words.size)
    assert _counter(L.count_labels(arr, pred, ("t", "p"))) == Counter(zip(words.tolist(), pred.tolist()))


def _byte_labels(rng, n: int, lo: int, k: int) -> np.ndarray:
    return (lo + rng.integers(0, k, n)).astype(np.uint8)


@pytest.mark.parametrize("seed", range(4))
def test_chunks_of_one_byte_codes_count_like_a_counter_in_the_compiled_kernel(seed):
    """Large uint8 chunks go through kernels/coclustering/byte_counting: any length (not a multiple of 4),
    offsets, one code, all 256 codes, read-only and strided arrays; equal to the Counter and to numpy."""
    from daskbicl.kernels.coclustering import contingency as C

    rng = np.random.default_rng(seed)
    n = C.BYTE_KERNEL_MIN + int(rng.integers(0, 4099))
    cases = [(_byte_labels(rng, n, 0, 256), _byte_labels(rng, n, 0, 256)),
             (_byte_labels(rng, n, 200, 50), _byte_labels(rng, n, 7, 3)),
             (np.full(n, 255, np.uint8), _byte_labels(rng, n, 0, 2)),
             (_byte_labels(rng, 2 * n, 3, 9)[::2], _byte_labels(rng, 2 * n, 0, 100)[1::2])]
    readonly = _byte_labels(rng, n, 1, 10)
    readonly.flags.writeable = False
    cases.append((readonly, readonly))
    for truth, pred in cases:
        got = count_pairs(truth, pred)
        assert isinstance(got, DenseCounts)
        assert _counter(got) == Counter(zip(truth.tolist(), pred.tolist()))
        assert got.table.dtype == np.int64 and got.total == truth.size
    small = _byte_labels(rng, C.BYTE_KERNEL_MIN - 1, 0, 5)  # below the threshold: numpy, same table
    assert _counter(count_pairs(small, small[::-1].copy())) == Counter(zip(small.tolist(), small[::-1].tolist()))


@pytest.mark.parametrize("widths", [(128, 128), (129, 128), (1, 256), (256, 256), (3, 7)])
def test_the_byte_kernel_equals_bincount_on_both_table_layouts(widths):
    """Four interleaved tables up to FOUR_TABLES_MAX cells, two above: both equal a bincount of the pair keys,
    with offsets up to the top code, sorted (long runs of one pair) and shuffled, any length."""
    from daskbicl.kernels.coclustering.byte_counting import FOUR_TABLES_MAX, count_byte_pairs

    width_t, width_p = widths
    rng = np.random.default_rng(width_t * 1000 + width_p)
    assert (width_t * width_p <= FOUR_TABLES_MAX) == (widths in [(128, 128), (1, 256), (3, 7)])
    for n in (0, 1, 4, 4101, 3 * 4096 + 3):
        t_lo, p_lo = int(rng.integers(0, 257 - width_t)), int(rng.integers(0, 257 - width_p))
        t = (t_lo + rng.integers(0, width_t, n)).astype(np.uint8)
        p = (p_lo + rng.integers(0, width_p, n)).astype(np.uint8)
        if n and width_t > 1:  # the extreme codes are present
            t[0], p[-1] = t_lo + width_t - 1, p_lo + width_p - 1
        for order in (np.arange(n), np.argsort(t, kind="stable")):
            ts, ps = t[order], p[order]
            keys = (ts.astype(np.int64) - t_lo) * width_p + (ps.astype(np.int64) - p_lo)
            want = np.bincount(keys, minlength=width_t * width_p).reshape(width_t, width_p)
            got = count_byte_pairs(ts, t_lo, width_t, ps, p_lo, width_p)
            assert got.dtype == np.int64 and got.shape == (width_t, width_p)
            np.testing.assert_array_equal(got, want)


def test_dask_chunks_of_one_byte_codes_equal_the_counter():
    from daskbicl.kernels.coclustering.contingency import BYTE_KERNEL_MIN

    rng = np.random.default_rng(28)
    n = 3 * BYTE_KERNEL_MIN + 12_345
    truth, pred = _byte_labels(rng, n, 0, 100), _byte_labels(rng, n, 0, 10)
    for chunks in [(BYTE_KERNEL_MIN + 1, BYTE_KERNEL_MIN + 3), (n // 2 + 1, BYTE_KERNEL_MIN // 2)]:
        graph = contingency_graph(da.from_array(truth, chunks=chunks[0]), da.from_array(pred, chunks=chunks[1]))
        assert _table_counter(graph.compute()) == Counter(zip(truth.tolist(), pred.tolist()))
