"""Hypothesis strategies for labels, co-clusterings and chunkings (after flox)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

#: Label values that stress compaction: small, sparse, and near 2**63.
LABEL_POOL = [0, 1, 2, 3, 7, 1_000_000_000, 2**40 + 3, 2**62, 2**63 - 1]


@st.composite
def labels(draw, min_size=1, max_size=40, max_clusters=5, huge=True):
    """A 1-D int64 label array (values from a random subset of a pool)."""
    n = draw(st.integers(min_size, max_size))
    k = draw(st.integers(1, max_clusters))
    pool = LABEL_POOL if huge else list(range(12))
    values = draw(st.lists(st.sampled_from(pool), min_size=k, max_size=k, unique=True))
    idx = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    return np.asarray(values, dtype=np.int64)[np.asarray(idx, dtype=np.intp)]


@st.composite
def labels_pair(draw, **kw):
    """Two label arrays of the same length."""
    a = draw(labels(**kw))
    kw = dict(kw, min_size=len(a), max_size=len(a))
    b = draw(labels(**kw))
    return a, b


@st.composite
def coclustering_pair(draw, max_rows=12, max_cols=10, huge=True):
    """(truth, pred) tuples of (row_labels, col_labels)."""
    z, zp = draw(labels_pair(max_size=max_rows, huge=huge))
    w, wp = draw(labels_pair(max_size=max_cols, huge=huge))
    return (z, w), (zp, wp)


@st.composite
def chunks_for(draw, n):
    """A random chunking (tuple of positive block lengths) of ``n`` items."""
    if n <= 1:
        return (n,)
    cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=min(6, n - 1))))
    bounds = [0, *cuts, n]
    return tuple(b - a for a, b in zip(bounds, bounds[1:]))


@st.composite
def bicluster_masks(draw, n_rows, n_cols, max_k=4, nonempty=True):
    """(row_mask (K, I), col_mask (K, J)) bool arrays, each bicluster non-empty."""
    k = draw(st.integers(1, max_k))
    rows = np.array(draw(st.lists(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows), min_size=k, max_size=k)))
    cols = np.array(draw(st.lists(st.lists(st.booleans(), min_size=n_cols, max_size=n_cols), min_size=k, max_size=k)))
    if nonempty:
        for b in range(k):
            rows[b, draw(st.integers(0, n_rows - 1))] = True
            cols[b, draw(st.integers(0, n_cols - 1))] = True
    return rows.astype(bool), cols.astype(bool)


@st.composite
def biclustering_pair(draw, max_rows=8, max_cols=7, max_k=4):
    """(truth, pred) pairs of ((row_mask, col_mask)) on the same matrix, and (I, J)."""
    n_rows = draw(st.integers(1, max_rows))
    n_cols = draw(st.integers(1, max_cols))
    truth = draw(bicluster_masks(n_rows, n_cols, max_k))
    pred = draw(bicluster_masks(n_rows, n_cols, max_k))
    return truth, pred, (n_rows, n_cols)
