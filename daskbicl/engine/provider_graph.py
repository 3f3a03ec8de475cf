"""The one engine function that builds every provider's graph from its record.

A provider (:class:`daskbicl.measures.registry.Provider`) is declared as
data, as flox declares an aggregation: which reduced tables its finalize
step takes, per axis (``tables``: one of :data:`SOURCES`, each a
:class:`~daskbicl.engine.core.ChunkPass` — chunk kernel and combine — run
over the row masks and over the column masks), whether it also takes the
bicluster ids of both sides (``ids``), what it computes from two
co-clusterings' contingency tables instead (``from_tables``), and its
``finalize``.  :func:`provider_graph` reads those fields and builds the
map, the tree reduction and the one finalize task; the same code runs in
process (:func:`~daskbicl.engine.core.eager`) or as a graph on any
scheduler.  The reads of a store carry their priorities from where the
store's arrays are built (:func:`daskbicl.scheduling.read_order`).

A provider whose tables depend on the measures asked for declares
``reads`` instead of one source for both axes: the (source, axis) tables
its finalize step takes, each with an optional step of its own (one task
per table); :func:`reads_graph` builds it (the covers: only the axes the
selected measures read, and the cells when asked for).  A provider whose
work after the reduction is more than one task declares ``finish``
instead of ``finalize``: the graph of that work, built from the two
reduced tables (the micro-object walk, :func:`daskbicl.engine.micro_pass.micro_finish`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import dask
import numpy as np
import xarray as xr

from ..kernels.coclustering.contingency import DEFAULT_POLICY, UNASSIGNED_ATTR
from ..kernels.micro.memberships import memberships_of_table
from .bicluster_pass import INTERSECT_MASKS, mask_counts_graph
from .blocks import SUM_BY_LABEL, as_biclustering, block_mask, blocks_against_masks, cover_mask
from .contingency_pass import COUNT_LABEL_PAIRS, partition_tables
from .core import ChunkPass, counting_pass, shared_pass, task
from .label_memberships import (
    LABEL_MEMBERSHIPS,
    PAIR_MEMBERSHIPS,
    cover_memberships,
    memberships_of_blocks,
    memberships_of_pair_blocks,
)
from .micro_pass import COUNT_MEMBERSHIPS, memberships_graph

__all__ = ["AXES", "COUNT_MEMBERSHIPS", "SOURCES", "Read", "Source", "axis_tables", "blocks_graph", "pair_tables",
           "provider_graph", "reads_graph", "tables_graph"]

#: The axes a per-axis table is counted along.
AXES = ("rows", "cols")


@dataclass(frozen=True)
class Source:
    """A per-axis reduced table a provider's finalize step may take.

    ``spec`` is the pass's declaration (chunk kernel and combine);
    ``graph(truth_mask, pred_mask, split_every=)`` runs it over one axis's
    (K, n) and (L, n) masks, shared between the providers of one call.
    For :func:`reads_graph`: ``mask(ds, axis, role)`` is the (clusters,
    items) mask of one side along ``axis`` the pass counts, and
    ``from_contingency(table)``, when given, the same table of two
    co-clusterings from their contingency table along that axis (no mask
    pass).  ``by_label``, when given, is the pass that counts a
    co-clustering against a biclustering by label instead of by block mask,
    and ``expand(rows, cols, names, policy, side) -> (rows, cols, ids)``
    the one task that turns its two reduced results into the source's
    tables of the co-clustering's blocks and their ids
    (:func:`blocks_graph`: nothing is computed to build the graph); with
    ``per_axis`` (a cover: each label once, whatever the other axis),
    ``expand(table, name, policy, side) -> table`` takes one axis.
    ``by_pair`` and ``expand_pair(rows, cols, policies) -> (rows, cols)``:
    the same for two co-clusterings, both sides counted by label
    (:func:`pair_tables`), for a source without ``from_contingency``.
    """

    spec: ChunkPass
    graph: Callable
    mask: Callable = block_mask
    from_contingency: Callable | None = None
    by_label: ChunkPass | None = None
    expand: Callable | None = None
    per_axis: bool = False
    by_pair: ChunkPass | None = None
    expand_pair: Callable | None = None


#: Name -> the per-axis reduced tables providers declare as their finalize inputs.
SOURCES: Mapping[str, Source] = {
    "masks": Source(INTERSECT_MASKS, mask_counts_graph, by_label=SUM_BY_LABEL, expand=blocks_against_masks),
    "memberships": Source(COUNT_MEMBERSHIPS, memberships_graph, by_label=LABEL_MEMBERSHIPS,
                          expand=memberships_of_blocks, by_pair=PAIR_MEMBERSHIPS,
                          expand_pair=memberships_of_pair_blocks),
    # the cover of an axis: a biclustering's bicluster sets, a co-clustering's clusters of that axis, each once
    "cover": Source(COUNT_MEMBERSHIPS, memberships_graph, mask=cover_mask, from_contingency=memberships_of_table,
                    by_label=LABEL_MEMBERSHIPS, expand=cover_memberships, per_axis=True),
}


@dataclass(frozen=True)
class Read:
    """One reduced table a provider with ``reads`` takes: ``source`` counted along ``axis``.

    ``step(table, *args)``, when given, runs on the reduced table as a task
    of its own (the tables of several reads are then finished in parallel).
    """

    source: str
    axis: str
    step: Callable | None = None
    args: tuple = ()

    def __post_init__(self):
        if self.source not in SOURCES:
            raise ValueError(f"unknown source {self.source!r}; known: {', '.join(SOURCES)}")
        if self.axis not in AXES:
            raise ValueError(f"unknown axis {self.axis!r}; expected one of {', '.join(AXES)}")


def passes_of(tables: str | None, from_tables: bool) -> tuple[ChunkPass, ...]:
    """The chunk passes a provider with these fields runs: its source's, and the contingency pass for co-clusterings."""
    source = SOURCES[tables] if tables is not None else None
    out: tuple[ChunkPass, ...] = (source.spec,) if source is not None else ()
    out += (source.by_label,) if source is not None and source.by_label is not None else ()
    out += (source.by_pair,) if source is not None and source.by_pair is not None else ()
    counted = from_tables or (source is not None and source.from_contingency is not None)
    return out + ((COUNT_LABEL_PAIRS,) if counted else ())


def _ids(ds: xr.Dataset) -> np.ndarray:
    if "bicluster" in ds.coords:
        return np.asarray(ds["bicluster"].values)
    return np.arange(ds.sizes["bicluster"])


def _bound(provider: Any) -> dict:
    """Options read from the configuration while the graph is built (so workers use the caller's)."""
    return dict(provider.bind()) if provider.bind is not None else {}


def tables_graph(provider: Any, rows, cols, options: Mapping):
    """``provider.from_tables`` over two contingency tables (Delayed or concrete), as one task."""
    return task(provider.from_tables)(rows, cols, **options, **_bound(provider))


def provider_graph(provider: Any, truth: xr.Dataset, pred: xr.Dataset, options: Mapping, *, split_every: int = 8):
    """The Delayed table of ``provider`` for two aligned inputs, built from the record's fields.

    * two co-clusterings and ``from_tables`` declared: the row and column
      contingency tables (:data:`~daskbicl.engine.contingency_pass.COUNT_LABEL_PAIRS`),
      then ``from_tables(rows, cols, **options)``;
    * ``reads`` declared: :func:`reads_graph`;
    * otherwise the declared source's table of the rows and of the columns
      (:func:`axis_tables`), then one task
      ``finalize(rows, cols[, truth_ids, pred_ids], **options)``, or the
      graph ``finish(rows, cols, **options)`` builds from them.

    ``options`` are the merged provider options of the selected measures;
    ``provider.bind()`` adds values read from the configuration now.
    """
    if provider.reads is not None:
        return reads_graph(provider, truth, pred, options, split_every=split_every)
    kinds = (truth.attrs["daskbicl_kind"], pred.attrs["daskbicl_kind"])
    if kinds == ("partition", "partition") and provider.from_tables is not None:
        rows, cols = partition_tables(truth, pred, split_every=split_every)
        return tables_graph(provider, rows, cols, options)
    if provider.tables is None:
        raise ValueError(f"provider {provider.name!r} declares no per-axis tables for a {kinds[0]} and a {kinds[1]}")
    rows, cols, ids = axis_tables(provider, truth, pred, split_every=split_every)
    if provider.finish is not None:
        return provider.finish(rows, cols, **options, **_bound(provider))
    extra = ids() if provider.ids else ()
    return task(provider.finalize)(rows, cols, *extra, **options, **_bound(provider))


def axis_tables(provider: Any, truth: xr.Dataset, pred: xr.Dataset, *, split_every: int = 8):
    """``(rows, cols, ids)``: the provider's source counted along the rows and along the columns.

    Each side is read as a biclustering (a co-clustering's blocks); one
    co-clustering against a biclustering is counted by label when the
    source declares how (:func:`blocks_graph`).  ``ids()`` gives the
    bicluster ids of truth and pred (called only by a provider that takes
    them).  With ``provider.shorter_axis_later`` the shorter axis's pass
    is built at priority -1.
    """
    source = SOURCES[provider.tables]
    later = "cols" if truth.sizes["row"] >= truth.sizes["col"] else "rows"
    staggered = {axis: dask.annotate(priority=-1) if provider.shorter_axis_later and axis == later
                 else contextlib.nullcontext() for axis in AXES}
    if source.by_label is not None and _labelled_side(truth, pred) is not None:
        return blocks_graph(source, truth, pred, staggered, split_every=split_every)
    t, p = as_biclustering(truth, "truth"), as_biclustering(pred, "pred")
    with staggered["rows"]:
        rows = source.graph(t.row_mask.data, p.row_mask.data, split_every=split_every)
    with staggered["cols"]:
        cols = source.graph(t.col_mask.data, p.col_mask.data, split_every=split_every)
    return rows, cols, lambda: (_ids(t), _ids(p))


def _labelled_side(truth: xr.Dataset, pred: xr.Dataset) -> str | None:
    """The side ("truth" or "pred") that is the one co-clustering of the pair (its blocks are counted by label)."""
    kinds = {"truth": truth, "pred": pred}
    labelled = [role for role, ds in kinds.items() if ds.attrs["daskbicl_kind"] == "partition"]
    return labelled[0] if len(labelled) == 1 else None


def _by_label(spec: ChunkPass, labels, masks, name: str, policy: str, split_every: int):
    def build():
        return counting_pass(spec, (labels, masks), name, policy, split_every=split_every)

    return shared_pass(f"{spec.name}-{split_every}-{name}-{policy}", (labels, masks), build)


def blocks_graph(source: Source, truth: xr.Dataset, pred: xr.Dataset, staggered: Mapping | None = None, *,
                 split_every: int = 8):
    """``(rows, cols, ids)`` of a co-clustering against a biclustering, with nothing computed to build the graph.

    The co-clustering's blocks are never made masks: per axis one pass
    (``source.by_label``, e.g. :data:`~daskbicl.engine.blocks.SUM_BY_LABEL`)
    counts the biclustering's masks by distinct label, and one task
    (``source.expand``, e.g. :func:`~daskbicl.engine.blocks.blocks_against_masks`)
    expands the labels into the blocks: the same tables and ids as the
    source's pass over :func:`~daskbicl.engine.blocks.as_biclustering`'s
    block masks.  ``staggered[axis]``: the context each axis's pass is
    built in (a priority).
    """
    side = _labelled_side(truth, pred)
    co, other = (truth, pred) if side == "truth" else (pred, truth)
    names = (f"{side} row_labels", f"{side} col_labels")
    staggered = staggered or {axis: contextlib.nullcontext() for axis in AXES}
    policy = co.attrs.get(UNASSIGNED_ATTR, DEFAULT_POLICY)
    assert source.by_label is not None and source.expand is not None

    def build():
        with staggered["rows"]:
            rows = _by_label(source.by_label, co.row_labels.data, other.row_mask.data, names[0], policy, split_every)
        with staggered["cols"]:
            cols = _by_label(source.by_label, co.col_labels.data, other.col_mask.data, names[1], policy, split_every)
        return task(source.expand, nout=3)(rows, cols, names, policy, side)

    arrays = (co.row_labels.data, other.row_mask.data, co.col_labels.data, other.col_mask.data)
    counted = shared_pass(f"blocks-{source.by_label.name}-{split_every}-{side}-{policy}", arrays, build)
    return counted[0], counted[1], lambda: (counted[2], _ids(other)) if side == "truth" else (_ids(other), counted[2])


def _labelled_table(source: Source, truth: xr.Dataset, pred: xr.Dataset, axis: str, split_every: int):
    """One axis's table of ``source`` for a co-clustering against a biclustering, counted by label in the graph."""
    if not source.per_axis:
        return blocks_graph(source, truth, pred, split_every=split_every)[AXES.index(axis)]
    assert source.by_label is not None and source.expand is not None
    side = _labelled_side(truth, pred)
    co, other = (truth, pred) if side == "truth" else (pred, truth)
    labels, mask = ("row_labels", "row_mask") if axis == "rows" else ("col_labels", "col_mask")
    name, policy = f"{side} {labels}", co.attrs.get(UNASSIGNED_ATTR, DEFAULT_POLICY)
    merged = _by_label(source.by_label, co[labels].data, other[mask].data, name, policy, split_every)
    return task(source.expand)(merged, name, policy, side)


def pair_tables(source: Source, truth: xr.Dataset, pred: xr.Dataset, *, split_every: int = 8):
    """``(rows, cols)`` of ``source`` for two co-clusterings, both counted by label (nothing computed to build).

    Per axis one pass (``source.by_pair``) over both label arrays, then one
    task (``source.expand_pair``) numbering both sides' labels and expanding
    them into their blocks: the tables of the source's pass over both sides'
    block masks.
    """
    assert source.by_pair is not None and source.expand_pair is not None
    spec, expand = source.by_pair, source.expand_pair
    policies = tuple(ds.attrs.get(UNASSIGNED_ATTR, DEFAULT_POLICY) for ds in (truth, pred))

    def build():
        rows = counting_pass(spec, (truth.row_labels.data, pred.row_labels.data), ("truth row_labels",
                             "pred row_labels"), policies, split_every=split_every)
        cols = counting_pass(spec, (truth.col_labels.data, pred.col_labels.data), ("truth col_labels",
                             "pred col_labels"), policies, split_every=split_every)
        return task(expand, nout=2)(rows, cols, policies)

    arrays = (truth.row_labels.data, pred.row_labels.data, truth.col_labels.data, pred.col_labels.data)
    return shared_pass(f"{spec.name}-{split_every}-{'-'.join(policies)}", arrays, build)


def reads_graph(provider: Any, truth: xr.Dataset, pred: xr.Dataset, options: Mapping, *, split_every: int = 8):
    """The Delayed table of a provider that declares ``reads``: ``finalize(*tables, **options)``.

    ``provider.reads(**options)`` (options include ``bind()``'s) lists the
    :class:`Read` tables in the order ``finalize`` takes them.  Each is its
    source's pass over both sides' masks along its axis, or, for two
    co-clusterings and a source with ``from_contingency``, that function of
    the contingency table along the axis (the pass the co-clustering
    measures count anyway); then the read's ``step`` as its own task.
    """
    opts = {**options, **_bound(provider)}
    both = truth.attrs["daskbicl_kind"] == pred.attrs["daskbicl_kind"] == "partition"
    tables = []
    for read in provider.reads(**opts):
        source = SOURCES[read.source]
        if both and source.from_contingency is not None:
            table = task(source.from_contingency)(partition_tables(truth, pred, split_every=split_every)[
                AXES.index(read.axis)])
        elif source.by_label is not None and _labelled_side(truth, pred) is not None:
            table = _labelled_table(source, truth, pred, read.axis, split_every)
        elif both and source.by_pair is not None:
            table = pair_tables(source, truth, pred, split_every=split_every)[AXES.index(read.axis)]
        else:
            table = source.graph(source.mask(truth, read.axis, "truth"), source.mask(pred, read.axis, "pred"),
                                 split_every=split_every)
        tables.append(table if read.step is None else task(read.step)(table, *read.args))
    return task(provider.finalize)(*tables, **opts)
