"""The best-matching count of many bootstrap replicates of one table at once (numpy only).

CE, NCE and the matching accuracies read, per axis, the number of objects on
the best one-to-one matching of clusters (:func:`~.cocluster_scores.matched_count`),
the number of objects and the numbers of non-empty clusters.  A bootstrap
replicate redraws the counts of the observed table's cells
(:mod:`.resampling`); its best matching is nearly always the observed one,
restricted to the cells the draw did not empty, and that can be *certified*
for a batch of replicates with a few array operations instead of one
assignment problem each.

The certificate is :func:`~.cocluster_scores.sure_cells`'s exchange argument
applied to fixed candidates: the cells of the observed table's best
matching (at most one per row and per column).  In a replicate with counts
``n'``, let ``r_h`` be the largest count of the *other* cells of row ``h``
(those not a candidate; 0 if none) and ``c_{h'}`` that of column ``h'``.  A
candidate ``(h, h')`` with ``n'_{hh'} > r_h + c_{h'}`` is then in every
maximum-weight matching of the replicate (it is the only candidate of its
row and of its column, so ``r_h`` and ``c_{h'}`` are the largest other cells
of its row and column, and the argument of ``sure_cells`` applies).  When
moreover every non-empty cell of the replicate lies in the row or the
column of such a sure candidate, every matching's cells outside the sure
rows and columns are empty, so the best matching holds exactly the sum of
the sure candidates: the replicate's matched count, exact.

A replicate the certificate does not settle (a tie, a candidate overtaken,
a non-empty cell outside the sure rows and columns) is solved on its own
table as before (:func:`~.cocluster_scores.matched_count`: sure cells, then
an assignment solver).  So every replicate's count equals the exact
optimum; only the work differs.  ``tests/kernels/coclustering/test_matching_replicates.py``
checks both paths against :func:`scipy.optimize.linear_sum_assignment` on
small random tables with many ties.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .cocluster_scores import DENSE_MATCH_LIMIT, matched_count, matching
from .contingency import Table
from .resampling import replicate_table

__all__ = ["MatchedReplicates", "ReplicateMatching"]


class MatchedReplicates(NamedTuple):
    """Per replicate (arrays of length B): what the matching measures read of one axis's table.

    ``matched``: objects on the best one-to-one matching; ``truth_clusters`` and
    ``pred_clusters``: the clusters the draw left non-empty (the replicate table's shape);
    ``n``: the objects (the same in every replicate); ``certified``: whether the
    count came from the certificate (else from solving the replicate's table; for tests and
    benchmarks).
    """

    n: int
    matched: np.ndarray
    truth_clusters: np.ndarray
    pred_clusters: np.ndarray
    certified: np.ndarray


#: Replicates x cells handled at once (each temporary a few MB: the batch of a table with many cells is cut).
_BLOCK_CELLS = 1 << 20


def _group_max(values: np.ndarray, flat: np.ndarray, size: int) -> np.ndarray:
    """``(B, size)``: the largest of ``values`` (B x cells) over the cells of each group, 0 if none; ``flat``
    (B x cells) is each cell's group plus ``size`` times its replicate.

    ``np.maximum.at`` over the flattened batch: no sort, no gather (faster than ``reduceat`` on
    cells gathered group by group, measured at 64 x 10,774 cells).
    """
    out = np.zeros(values.size // max(values.shape[1], 1) * size, dtype=values.dtype)
    np.maximum.at(out, flat, values.ravel())
    return out.reshape(values.shape[0], size)


class ReplicateMatching:
    """The matched counts of redrawn copies of ``table`` (same cells, new counts), set up once per table.

    >>> t = Table.from_dense([[5, 1, 0], [1, 4, 0], [0, 0, 4]])  # cells (0,0) (0,1) (1,0) (1,1) (2,2)
    >>> m = ReplicateMatching(t).matched(np.array([[5, 1, 1, 4, 4], [6, 0, 2, 3, 3], [0, 6, 0, 3, 4]]))
    >>> m.matched.tolist(), m.truth_clusters.tolist(), m.pred_clusters.tolist()
    ([13, 12, 10], [3, 3, 3], [3, 3, 2])
    >>> m.certified.tolist()  # the last: (1,1) is no longer sure (3 < 0 + 6), its replicate is solved
    [True, True, False]
    """

    def __init__(self, table: Table, dense_limit: int = DENSE_MATCH_LIMIT) -> None:
        self.table, self.dense_limit = table, dense_limit
        h, hp = table.shape
        r, c, _ = matching(table, dense_limit)  # memoised: the observed value computed it already
        key = table.rows.astype(np.int64) * hp + table.cols  # find the matched cells by their (row, column)
        order = np.argsort(key, kind="stable")
        self.candidates = order[np.searchsorted(key, r.astype(np.int64) * hp + c, sorter=order)]
        self.candidate_rows, self.candidate_cols = r, c
        self._flat: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _flat_groups(self, b: int) -> tuple[np.ndarray, np.ndarray]:
        """For a batch of ``b`` replicates: each cell's row and column, offset by its replicate (for
        :func:`_group_max`); kept per batch size."""
        if b not in self._flat:
            t = self.table
            self._flat[b] = tuple((index[None, :] + (np.arange(b) * size)[:, None]).ravel()  # type: ignore[assignment]
                                  for index, size in ((t.rows, t.shape[0]), (t.cols, t.shape[1])))
        return self._flat[b]

    def matched(self, drawn: np.ndarray) -> MatchedReplicates:
        """The :class:`MatchedReplicates` of the replicates ``drawn`` (B x cells of the table)."""
        drawn = np.asarray(drawn)
        step = max(1, _BLOCK_CELLS // max(drawn.shape[1], 1))
        parts = [self._block(drawn[lo : lo + step]) for lo in range(0, drawn.shape[0], step)]
        return MatchedReplicates(self.table.n, *(np.concatenate(p) for p in zip(*parts)))

    def _block(self, drawn: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(matched, truth clusters, pred clusters, certified)`` of a block of replicates."""
        t, b = self.table, drawn.shape[0]
        h, hp = t.shape
        cand = np.take(drawn, self.candidates, axis=1)  # (B, matched cells)
        others = drawn.copy()
        others[:, self.candidates] = 0  # the largest *other* cell of each row and column
        flat_rows, flat_cols = self._flat_groups(b)
        row_max, col_max = _group_max(others, flat_rows, h), _group_max(others, flat_cols, hp)
        cr, cc = self.candidate_rows, self.candidate_cols
        sure = cand > row_max[:, cr] + col_max[:, cc]
        matched = np.where(sure, cand, 0).sum(axis=1)
        row_full, col_full = row_max > 0, col_max > 0  # non-empty rows and columns in each replicate
        row_full[:, cr] |= cand > 0
        col_full[:, cc] |= cand > 0
        truth_k, pred_k = row_full.sum(axis=1), col_full.sum(axis=1)
        n_sure = sure.sum(axis=1)
        # Covered at once when every non-empty row (or column) holds a sure candidate.
        certified = (n_sure == truth_k) | (n_sure == pred_k)
        for i in np.flatnonzero(~certified):
            certified[i] = self._covered(drawn[i], sure[i])
        for i in np.flatnonzero(~certified):
            matched[i] = matched_count(replicate_table(t, drawn[i]), self.dense_limit)
        return matched.astype(np.int64), truth_k, pred_k, certified

    def _covered(self, counts: np.ndarray, sure: np.ndarray) -> bool:
        """Whether every non-empty cell of one replicate is in the row or the column of a sure candidate."""
        t = self.table
        sure_row = np.zeros(t.shape[0], dtype=bool)
        sure_col = np.zeros(t.shape[1], dtype=bool)
        sure_row[self.candidate_rows[sure]] = True
        sure_col[self.candidate_cols[sure]] = True
        return not np.any((counts > 0) & ~sure_row[t.rows] & ~sure_col[t.cols])
