"""Spread integer labels (cluster ids such as ``k * 1000003 + 7``): the compiled rank lookup and the merge of
chunks by ranks, against a Counter of the label pairs.

Chunks large enough for the compiled lookup (``SLOT_KERNEL_MIN``) and
merges of enough pairs to be hashed (``_HASH_MERGE``) are built here at
their real sizes; the oracle counts the pairs in Python.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import daskbicl
from daskbicl.engine import labels, spread_labels


def _pairs(part) -> Counter:
    pairs = part.to_pairs() if hasattr(part, "to_pairs") else part
    return Counter({(int(t), int(p)): int(c) for t, p, c in zip(pairs.truth.tolist(), pairs.pred.tolist(),
                                                             pairs.count.tolist()) if c})


def _spread(rng, n: int, k: int, unassigned: float = 0.0) -> np.ndarray:
    ids = rng.permutation(k).astype(np.int64) * 1_000_003 + 7
    out = ids[rng.integers(0, k, n)]
    out[rng.random(n) < unassigned] = -1
    return out


@pytest.mark.parametrize("k", [3, 200, 900])
def test_rank_codes_with_the_compiled_lookup_are_exact(k):
    rng = np.random.default_rng(k)
    values = _spread(rng, spread_labels.SLOT_KERNEL_MIN + 123, k, unassigned=0.01)
    values[::997] = rng.integers(0, 2**62, values[::997].size)  # labels the sample misses: hashed after it
    codes, uniques = spread_labels.rank_codes(values)
    assert (uniques[codes] == values).all()
    assert np.unique(uniques).size == uniques.size


@pytest.mark.parametrize("seed", range(4))
def test_chunks_of_spread_labels_merge_to_the_counter_of_their_pairs(seed):
    rng = np.random.default_rng(seed)
    k_t, k_p = [(30, 40), (300, 200), (1000, 5), (1000, 1000)][seed]
    n = 3 * spread_labels.SLOT_KERNEL_MIN
    truth, pred = _spread(rng, n, k_t, 0.02), _spread(rng, n, k_p, 0.02)
    bounds = [0, n // 3, 2 * n // 3, n]
    parts = [labels.count_labels(truth[a:b], pred[a:b], ("truth", "pred")) for a, b in zip(bounds, bounds[1:])]
    merged = labels.merge_labelled(*parts)
    want = Counter(zip(truth.tolist(), pred.tolist()))
    assert _pairs(merged) == want


def test_spread_labels_score_as_compact_ones_through_the_graph():
    """Scores of an increasing relabelling equal; chunked so that chunks are counted and merged as a graph."""
    import dask
    import dask.array as da

    rng = np.random.default_rng(9)
    n, k = 400_000, 600
    compact = [rng.integers(0, k, n) for _ in range(4)]
    perm = rng.permutation(k)
    spread = [da.from_array(perm[x] * 1_000_003 + 7, chunks=n // 4) for x in compact]
    want = daskbicl.score((compact[0], compact[1]), (compact[2], compact[3]))
    with dask.config.set(scheduler="threads"):
        got = daskbicl.score((spread[0], spread[1]), (spread[2], spread[3]))
    assert got.keys() == want.keys()
    for name in want:
        assert got[name] == pytest.approx(want[name], rel=1e-12, abs=1e-12), name


@pytest.mark.parametrize("distinct", [3, 1500, 6000])
def test_unique_labels_of_long_object_arrays_equal_numpys(distinct):
    """Long object arrays are hashed before sorting their distinct labels: same labels, same inverse as
    np.unique, also when every label is distinct (nothing to gain) and with mixed types (the fallback order)."""
    from daskbicl.kernels.coclustering.contingency import unique_labels

    rng = np.random.default_rng(distinct)
    values = np.array([f"s{i}" for i in rng.integers(0, distinct, 6000)], dtype=object)
    if distinct == 6000:
        values = np.array([f"s{i}" for i in rng.permutation(6000)], dtype=object)
    uniq, inverse = unique_labels(values)
    want_uniq, want_inverse = np.unique(values, return_inverse=True)
    assert uniq.tolist() == want_uniq.tolist() and inverse.tolist() == want_inverse.tolist()
    mixed = np.concatenate([values, np.array([3, None, 2.0, True] * 300, dtype=object)])
    uniq, inverse = unique_labels(mixed)
    small_uniq, _ = unique_labels(mixed[:1000])  # below the hashing threshold: the plain fallback
    assert [type(u).__name__ for u in uniq][:4] == ["NoneType", "bool", "float", "int"]  # by type name, then value
    assert all(u is v or u == v for u, v in zip(uniq[inverse].tolist(), mixed.tolist()))
    assert len(set(map(repr, uniq.tolist()))) == uniq.size
    assert set(map(repr, small_uniq.tolist())) <= set(map(repr, uniq.tolist()))


# --- chunks counted as dense blocks over their own labels (engine/label_grids) ---


def _object_pairs(part) -> Counter:
    pairs = part.to_pairs()
    out: Counter = Counter()
    for t, p, c in zip(pairs.truth.tolist(), pairs.pred.tolist(), pairs.count.tolist()):
        out[(t, p)] += c
    return out


@pytest.mark.parametrize("seed", range(6))
def test_blocks_over_chunk_labels_merge_to_the_counter(seed):
    """Chunks whose label vectors differ (each sees some labels only), strings and spread integers with
    unassigned entries, merged in a tree as dask does: the Counter of all pairs."""
    from daskbicl.kernels.coclustering.contingency import LabelledCounts

    rng = np.random.default_rng(100 + seed)
    n = 2 * spread_labels.SLOT_KERNEL_MIN + 777
    k_t, k_p = [(40, 30), (400, 3), (7, 900)][seed % 3]
    truth = _spread(rng, n, k_t, 0.01 * (seed % 2))
    names = np.array([f"g{i}" for i in range(k_p)])
    pred = names[rng.integers(0, k_p, n)].astype(object if seed % 2 else f"U{len(names[-1])}")
    if seed % 2:
        pred[rng.random(n) < 0.02] = None
        pred[rng.random(n) < 0.01] = float("nan")  # NaN is unassigned as None is
    cut = np.sort(rng.choice(np.arange(1, n), 5, replace=False)) if seed < 3 else np.arange(1, 6) * (n // 6)
    bounds = [0, *cut.tolist(), n]
    parts = [labels.count_labels(truth[a:b], pred[a:b], ("truth", "pred")) for a, b in zip(bounds, bounds[1:])]
    merged = labels.merge_labelled(labels.merge_labelled(*parts[:3]), labels.merge_labelled(*parts[3:]))
    if all(isinstance(p, LabelledCounts) for p in parts):  # (a short chunk may hand on its pairs instead)
        assert isinstance(merged, LabelledCounts)
    clean = [None if (v is None or v != v) else v for v in pred.tolist()]
    want = Counter(zip(truth.tolist(), clean))
    assert _object_pairs(merged) == Counter({(t if t >= 0 else -1, p): c for (t, p), c in want.items()})
    assert labels.unassigned_count(merged) == (int((truth < 0).sum()), sum(v is None for v in clean))
    if seed % 2 == 0:  # no unassigned entries: the table is that of the pairs, labels sorted
        table, oracle = labels.to_table(merged), merged.to_pairs().to_table()
        assert table.truth_labels.tolist() == oracle.truth_labels.tolist()
        assert table.pred_labels.tolist() == oracle.pred_labels.tolist()
        assert np.array_equal(table.dense(), oracle.dense())


def test_blocks_merge_with_dense_ranges_and_fall_back_to_pairs_when_too_large():
    from daskbicl.engine.label_grids import merge_grids
    from daskbicl.kernels.coclustering.contingency import DENSE_CELLS, DenseCounts, LabelledCounts

    grid = LabelledCounts(np.array([10**12, 5]), np.array([0, 1]), np.array([[1, 2], [3, 4]]))
    dense = DenseCounts(5, 0, np.array([[7, 0, 1]]))
    merged = merge_grids([grid, dense])
    assert _object_pairs(merged) == Counter({(10**12, 0): 1, (10**12, 1): 2, (5, 0): 10, (5, 1): 4, (5, 2): 1})
    assert merge_grids([dense, dense]) is None  # only ranges: the range merge adds them
    side = int(np.sqrt(DENSE_CELLS)) + 1
    wide = LabelledCounts(np.arange(side) * 3, np.arange(side) * 5, np.ones((side, side), np.int64))
    assert merge_grids([wide, grid]) is None  # the united block would be too large
    pairs = labels.merge_labelled(wide, grid).to_pairs()  # merged as pairs instead
    t, p, c = pairs.truth, pairs.pred, pairs.count  # 4 million pairs: summed with numpy, not a Counter

    def count(a, b):  # what _object_pairs(...)[(a, b)] says: a pair listed twice counts twice
        return int(c[(t == a) & (p == b)].sum())

    assert count(5, 0) == 3 and count(3, 5) == 1 and int(c.sum()) == side * side + 10


def test_string_labels_score_as_compact_ones_through_the_graph():
    import dask
    import dask.array as da

    rng = np.random.default_rng(11)
    n, k = 300_000, 300
    compact = [rng.integers(0, k, n) for _ in range(4)]
    names = np.array([f"c{i:04d}" for i in rng.permutation(k)])
    strings = [da.from_array(names[x], chunks=n // 3) for x in compact]
    want = daskbicl.score((compact[0], compact[1]), (compact[2], compact[3]))
    with dask.config.set(scheduler="threads"):
        got = daskbicl.score((strings[0], strings[1]), (strings[2], strings[3]))
    assert got.keys() == want.keys()
    for name in want:
        assert got[name] == pytest.approx(want[name], rel=1e-12, abs=1e-12), name


def test_a_sparse_block_is_handed_on_as_pairs():
    """Few labels spread over many possible pairs (a diagonal): the chunk's pairs, not a mostly empty block."""
    from daskbicl.kernels.coclustering.contingency import LabelledCounts, PairCounts

    k = 1500
    ids = np.arange(k, dtype=np.int64) * 1_000_003 + 7
    truth = np.repeat(ids, 3)
    part = labels.count_labels(truth, truth[::-1].copy(), ("truth", "pred"))
    assert isinstance(part, PairCounts) and not isinstance(part, LabelledCounts)
    assert _pairs(part) == Counter(zip(truth.tolist(), truth[::-1].tolist()))
    dense = labels.count_labels(truth[: 3 * 40], np.tile(ids[:3], 40), ("truth", "pred"))
    assert isinstance(dense, LabelledCounts)  # 40 x 3 labels, every pair met: a block
