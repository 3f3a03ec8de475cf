"""The row and column signatures of two co-clusterings' blocks, from their contingency tables (no masks).

Seen as biclusterings, a co-clustering with H row and L column clusters has
the H x L blocks as biclusters, block (h, l) numbered ``h L + l`` (truth's
first, then pred's after truth's ``K = H L``; the order of
:func:`daskbicl.engine.blocks.as_biclustering`).  A row of truth row
cluster h and pred row cluster h' lies in the blocks (h, l) for every l and
(h', l') for every l': its signature depends only on its table entry, so
the signatures are the non-zero entries of the row table, with their counts.
The Gram table (items in both of two biclusters) is a Kronecker product of
the table, the cluster sizes and blocks of ones.  Columns likewise, with
the roles of h and l swapped.  This replaces one-hot masks of K rows by the
table the co-clustering pass counts anyway.
"""

from __future__ import annotations

import numpy as np

from ..micro.memberships import Memberships

__all__ = ["block_memberships", "block_memberships_of_tables"]


def _sizes(table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k, l = len(table.truth_labels), len(table.pred_labels)
    joint = np.zeros((k, l), np.int64)
    np.add.at(joint, (np.asarray(table.rows), np.asarray(table.cols)), np.asarray(table.counts, np.int64))
    return joint, joint.sum(axis=1), joint.sum(axis=0)


def block_memberships(table, other: tuple[int, int], axis: str) -> Memberships:
    """The :class:`~daskbicl.kernels.micro.memberships.Memberships` of one axis for the blocks as biclusters.

    ``table`` is that axis's contingency table, ``other`` the numbers of truth
    and pred clusters of the other axis, ``axis`` "rows" or "cols".

    >>> from daskbicl.kernels.coclustering.contingency import Table
    >>> m = block_memberships(Table.from_labels([0, 0, 1], [0, 1, 1]), (1, 2), "rows")
    >>> m.lists(), m.cnt.tolist()
    ([[0, 2, 3], [0, 4, 5], [1, 4, 5]], [1, 1, 1])
    """
    joint, a, b = _sizes(table)
    h_t, h_p = joint.shape
    l_t, l_p = other
    n_t, n_p = h_t * l_t, h_p * l_p
    if axis == "rows":
        def t_blocks(h):
            return h * l_t + np.arange(l_t)

        def p_blocks(h):
            return n_t + h * l_p + np.arange(l_p)

        def kron(x, ones_shape):
            return np.kron(x, np.ones(ones_shape, np.int64))
    else:
        def t_blocks(h):
            return np.arange(l_t) * h_t + h

        def p_blocks(h):
            return n_t + np.arange(l_p) * h_p + h

        def kron(x, ones_shape):
            return np.kron(np.ones(ones_shape, np.int64), x)
    rows, cols = np.nonzero(joint)
    lists = [np.concatenate([t_blocks(i), p_blocks(j)]) for i, j in zip(rows, cols)]
    ptr = np.concatenate([[0], np.cumsum([len(x) for x in lists])]).astype(np.int64)
    el = (np.concatenate(lists) if lists else np.zeros(0)).astype(np.int32)
    gram = np.zeros((n_t + n_p, n_t + n_p), np.int64)
    gram[:n_t, :n_t] = kron(np.diag(a), (l_t, l_t))
    gram[:n_t, n_t:] = kron(joint, (l_t, l_p))
    gram[n_t:, :n_t] = gram[:n_t, n_t:].T
    gram[n_t:, n_t:] = kron(np.diag(b), (l_p, l_p))
    return Memberships(n_t, n_p, int(joint.sum()), ptr, el, joint[rows, cols].astype(np.int64), gram)


def block_memberships_of_tables(row_table, col_table) -> tuple[Memberships, Memberships]:
    """Both axes' :func:`block_memberships` from the row and column tables of two co-clusterings."""
    rows = block_memberships(row_table, (len(col_table.truth_labels), len(col_table.pred_labels)), "rows")
    cols = block_memberships(col_table, (len(row_table.truth_labels), len(row_table.pred_labels)), "cols")
    return rows, cols
