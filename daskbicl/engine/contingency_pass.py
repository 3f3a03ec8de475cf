"""The co-clustering counting pass: row and column contingency tables.

One chunked pass per axis: each chunk of (truth labels, pred labels) is
encoded (integers as they are, any other label type factorised, unassigned
entries marked; :mod:`daskbicl.engine.labels`) and counted into sparse pair
counts with :func:`daskbicl.kernels.coclustering.contingency.count_pairs` (which also
validates the label values), the chunk results are merged in a tree, and
the root is compacted into a :class:`~daskbicl.kernels.coclustering.contingency.Table`
under the inputs' unassigned policy (``attrs["daskbicl_unassigned"]``, set
by :func:`daskbicl.io.validate.as_dataset`).  Every co-clustering
measure is finalized from the two tables; nothing else touches the labels.

Label arrays read from a store written by :func:`daskbicl.save` are counted
as their codes (:mod:`daskbicl.codes`: one small unsigned integer per
label, always the dense fast path); the label values are put back on the
merged counts, so the tables, and every score, are those of the labels.
"""

from __future__ import annotations

import xarray as xr

from ..codes import coding_of
from ..errors import LabelError
from ..kernels.coclustering.contingency import UNASSIGNED_ATTR, Table
from .core import ChunkPass, counting_pass, shared_pass, task
from .labels import DEFAULT_POLICY, Counts, count_labels, decode_pairs, merge_labelled, to_table

__all__ = ["COUNT_LABEL_PAIRS", "contingency_graph", "partition_tables"]


def _count_block(names, truth, pred) -> Counts:
    return count_labels(truth, pred, names)


def _finalize(policy: str, names: tuple[str, str], pairs: Counts, tables=(None, None)) -> Table:
    return to_table(decode_pairs(pairs, tables, names), policy, names)


def _finalize_axes(policy: str, row_names, rows, col_names, cols, tables=(None,) * 4) -> tuple[Table, Table]:
    """Both axes' tables in one task, so an unassigned-entry error names every side and axis at once."""
    rows = decode_pairs(rows, tables[:2], row_names)
    cols = decode_pairs(cols, tables[2:], col_names)
    try:
        row_table = to_table(rows, policy, row_names)
    except LabelError as exc:
        problems = [str(exc)]
        try:
            to_table(cols, policy, col_names)
        except LabelError as more:
            problems.append(str(more))
        raise LabelError(_joined(problems)) from None
    return row_table, to_table(cols, policy, col_names)


def _joined(messages: list[str]) -> str:
    """Two unassigned-entry messages as one: the counts of both, the advice once."""
    counts = [m.split(" (NaN, None", 1)[0] for m in messages]
    return " and ".join(counts) + " (NaN, None" + messages[0].split(" (NaN, None", 1)[1]


def _counted(labels):
    """``(array to count, label of each code or None)``: a stored label array is counted as its codes."""
    coding = coding_of(labels)
    return (labels, None) if coding is None else (coding.codes, coding.table)


#: Pair counts of two aligned label arrays: each chunk coded and counted, the counts merged by label value.
COUNT_LABEL_PAIRS = ChunkPass("label-pairs", chunk=_count_block, combine=merge_labelled)


def _merged_counts(truth_labels, pred_labels, names, split_every: int):
    return counting_pass(COUNT_LABEL_PAIRS, (truth_labels, pred_labels), names, split_every=split_every)


def contingency_graph(truth_labels, pred_labels, *, names=("truth labels", "pred labels"), split_every: int = 8,
                      unassigned: str = DEFAULT_POLICY):
    """A Delayed :class:`Table` counting two aligned 1-D label arrays (any label type)."""
    (truth_labels, t_table), (pred_labels, p_table) = _counted(truth_labels), _counted(pred_labels)
    root = _merged_counts(truth_labels, pred_labels, names, split_every)
    return task(_finalize)(unassigned, names, root, (t_table, p_table))


def policy_of(*datasets: xr.Dataset) -> str:
    """The unassigned policy the inputs were validated with (the same for both)."""
    policies = {ds.attrs.get(UNASSIGNED_ATTR, DEFAULT_POLICY) for ds in datasets}
    if len(policies) != 1:
        raise ValueError(f"truth and pred were validated with different unassigned policies: {sorted(policies)}")
    return policies.pop()


def partition_tables(truth: xr.Dataset, pred: xr.Dataset, *, split_every: int = 8):
    """Delayed ``(row_table, col_table)`` for two aligned co-clusterings.

    Inside :func:`~daskbicl.engine.core.shared_passes`, repeated calls for the
    same label arrays return the same graphs.
    """
    policy = policy_of(truth, pred)

    def build():
        row_names, col_names = ("truth row_labels", "pred row_labels"), ("truth col_labels", "pred col_labels")
        counted = [_counted(a) for a in arrays]
        tables = tuple(table for _, table in counted)
        rows = _merged_counts(counted[0][0], counted[1][0], row_names, split_every)
        cols = _merged_counts(counted[2][0], counted[3][0], col_names, split_every)
        both = task(_finalize_axes, nout=2)(policy, row_names, rows, col_names, cols, tables)
        return both[0], both[1]

    arrays = (truth.row_labels.data, pred.row_labels.data, truth.col_labels.data, pred.col_labels.data)
    return shared_pass(f"partition-{split_every}-{policy}", arrays, build)
