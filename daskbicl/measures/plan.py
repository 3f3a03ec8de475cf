"""One scoring pipeline: :class:`ScorePlan`.

Every way of scoring — :func:`daskbicl.score`, the per-measure functions, the
accessor, ``daskbicl score``, the batch runner and :func:`daskbicl.tradeoff` —
goes through the same four steps:

1. **check** the request without data: measure names resolved, parameters
   validated against their declared constraints (:func:`check_request`;
   this is all ``daskbicl batch --dry-run`` needs);
2. **build** a plan: inputs validated and aligned once, measures selected
   for the input kinds (:meth:`ScorePlan.build`);
3. **graphs**: one Delayed counting pass per provider, shared between the
   plans built together (:func:`plan_graphs`);
4. **finalize** every measure from the computed tables
   (:meth:`ScorePlan.finalize`), a shared computation once per parameter set.

:func:`run` does 3–4 for any number of plans in one ``dask.compute`` — or,
for small in-memory inputs (:func:`scored_in_process`), with no graph at all:
the counting passes run as they are built, in this process, even with a
``distributed`` Client active.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import dask
import xarray as xr
from dask.base import is_dask_collection

from .. import config
from ..engine.core import any_lazy, eager, shared_passes, task
from ..engine.provider_graph import provider_graph, tables_graph
from ..errors import InputError, MeasureError
from ..io.align import align
from ..io.inputs import as_input
from ..io.validate import BICLUSTERING, PARTITION
from ..scheduling import compute, in_process, inline_reads, read_tasks_used, scatter_inputs
from .registry import PROVIDERS, Measure
from .request import check_options, check_request, resolve_params, select_measures
from .tables import Contingency

__all__ = [
    "ScorePlan", "check_request", "graph_key", "plan_graphs", "provider_options", "resolve_params", "run",
    "run_tables", "scored_in_process", "select_measures",
]


def _merge_option(provider: str, key: str, a, b):
    if isinstance(a, bool) and isinstance(b, bool):
        return a or b
    if isinstance(a, (set, frozenset)) and isinstance(b, (set, frozenset)):
        return frozenset(a) | frozenset(b)
    if a == b:
        return a
    raise MeasureError(f"measures ask provider {provider!r} for conflicting {key}: {a!r} and {b!r}")


def provider_options(selected: Iterable[Measure], params: Mapping[str, Mapping] | None = None) -> dict[str, dict]:
    """Provider name -> the merged ``provider_options`` of the selected measures.

    ``params`` (measure name -> validated parameters) adds the values of the
    parameters declared ``Param(..., provider=True)``.

    Examples
    --------
    >>> from daskbicl.measures import REGISTRY
    >>> opts = provider_options([REGISTRY["micro_rnia"], REGISTRY["e4sc"], REGISTRY["cari"]])
    >>> sorted(opts["micro"]["parts"]), opts["partition"]
    (['coverage', 'overlap'], {})
    """
    out: dict[str, dict] = {}
    for m in selected:
        opts = out.setdefault(m.provider, {})
        given = (params or {}).get(m.name, {})
        for key, value in m.options(given).items():
            value = frozenset(value) if isinstance(value, (set, frozenset)) else value
            opts[key] = _merge_option(m.provider, key, opts[key], value) if key in opts else value
    return {name: dict(sorted(opts.items())) for name, opts in out.items()}


def graph_key(provider: str, options: Mapping) -> str:
    """The key of a provider's graph: its name, plus its options when it has any.

    Two requests with different measures (a batch manifest) then never share
    a graph that lacks a part one of them reads.
    """
    if not options:
        return provider
    text = ";".join(
        f"{k}={','.join(sorted(map(str, v))) if isinstance(v, frozenset) else v}" for k, v in options.items()
    )
    return f"{provider}[{text}]"


@dataclass(frozen=True)
class ScorePlan:
    """Validated, aligned inputs and the measures to finalize from their tables.

    Build with :meth:`build`; compute with :func:`run` (many plans in one
    pass) or :meth:`compute`.

    Attributes
    ----------
    truth, pred : xarray.Dataset
        Validated, pred aligned to truth (lazy).
    measures : tuple of Measure
        Selected measures, in request order.
    params : mapping
        Measure name -> validated parameters.
    options : mapping
        Provider name -> merged provider options; ``tables`` providers are
        included with their own options.
    empty_pred : bool
        Pred is a biclustering with no bicluster (docs/guide/data-model.md): no table is
        counted; every measure takes its declared ``empty_pred`` value once
        truth is known to cover a cell.
    contingency : Contingency, optional
        Scoring from already counted tables (:meth:`from_tables`); truth and
        pred are then None.
    """

    truth: xr.Dataset
    pred: xr.Dataset
    measures: tuple[Measure, ...]
    params: Mapping[str, dict]
    options: Mapping[str, dict]
    empty_pred: bool = False
    contingency: Contingency | None = None

    @classmethod
    def build(cls, truth, pred, measures=None, *, tables: Sequence[str] = (),
              roles: tuple[str, str] = ("truth", "pred"), unassigned: str | None = None, **params) -> ScorePlan:
        """Check the request, validate and align the inputs.

        Parameters
        ----------
        truth, pred
            Anything :func:`daskbicl.score` accepts.
        measures : str or list of str, optional
            Default: every measure of the default families for the kinds.
        tables : sequence of str
            Providers whose raw tables are wanted too (e.g. ``["bicluster"]``
            for the tradeoff space); read them with :meth:`tables_of`.
        roles : (str, str)
            How messages name the two inputs.
        unassigned : {"error", "cluster", "singleton"}, optional
            What unassigned labels (NaN, None, NA, negative integers) of a
            co-clustering mean (default "error"); see
            :mod:`daskbicl.engine.labels`.
        **params
            Measure parameters, validated against their constraints.
        """
        if isinstance(truth, Contingency):
            if pred is not None:
                raise InputError("score(tables, ...) takes the counted tables alone: pass no pred")
            return cls.from_tables(truth, measures, **params)
        unassigned = check_options(unassigned=unassigned)["unassigned"]
        if pred is None:
            raise InputError("pred is missing: score(truth, pred, ...), or score(tables) for a daskbicl.contingency()")
        tables_only = bool(tables) and isinstance(measures, (list, tuple)) and not measures
        if not tables_only:  # names and parameters fail before any store is opened
            check_request(measures, params)
        truth = as_input(truth, roles[0], unassigned=unassigned)
        pred = as_input(pred, roles[1], allow_empty=not tables, unassigned=unassigned)
        truth, pred = align(truth, pred)
        kinds = (truth.attrs["daskbicl_kind"], pred.attrs["daskbicl_kind"])
        selected = [] if tables_only else select_measures(measures, *kinds)
        if not selected and not tables:
            raise MeasureError(f"no measure for a {kinds[0]} truth and a {kinds[1]} pred is available")
        empty = kinds[1] == BICLUSTERING and pred.sizes["bicluster"] == 0
        if empty:
            refused = [m.name for m in selected if m.empty_pred is None]
            if refused:
                raise MeasureError(f"{roles[1]} has no biclusters, which {', '.join(refused)} cannot score")
            return cls(truth, pred, tuple(selected), resolve_params(selected, params), {}, empty_pred=True)
        resolved = resolve_params(selected, params)
        options = provider_options(selected, resolved)
        for name in tables:
            if name not in PROVIDERS:
                raise MeasureError(f"unknown provider {name!r}; known: {', '.join(PROVIDERS)}")
            for role, kind in zip(roles, kinds):
                if kind not in PROVIDERS[name].kinds:
                    raise MeasureError(f"{role} is a {kind}; the {name} tables need {' or '.join(PROVIDERS[name].kinds)}")
            options.setdefault(name, {})
        return cls(truth, pred, tuple(selected), resolved, options)

    @classmethod
    def from_tables(cls, tables: Contingency, measures=None, **params) -> ScorePlan:
        """A plan that scores two co-clusterings from their counted tables (no data pass).

        Every co-clustering measure applies, and every other measure whose
        provider declares ``from_tables``.
        """
        check_request(measures, params)
        selected = select_measures(measures, PARTITION, PARTITION)
        for m in selected:
            if PROVIDERS[m.provider].from_tables is None:
                raise MeasureError(f"measure {m.name!r} cannot be scored from contingency tables")
        resolved = resolve_params(selected, params)
        return cls(None, None, tuple(selected), resolved, provider_options(selected, resolved),
                   contingency=tables)

    @property
    def keys(self) -> dict[str, str]:
        """Provider name -> graph key."""
        return {name: graph_key(name, opts) for name, opts in self.options.items()}

    def graphs(self) -> dict:
        """Graph key -> Delayed table, one counting pass per provider.

        Call inside :func:`~daskbicl.engine.core.shared_passes` to share
        passes with other plans over the same arrays (:func:`plan_graphs`
        does).
        """
        if self.empty_pred:
            return {_COVERS: _truth_covers_a_cell(self.truth)}
        if self.contingency is not None:
            rows, cols = self.contingency.row_table, self.contingency.col_table
            return {
                graph_key(name, opts): tables_graph(PROVIDERS[name], rows, cols, opts)
                for name, opts in self.options.items()
            }
        def build():
            with shared_passes():
                return {
                    graph_key(name, opts): provider_graph(PROVIDERS[name], self.truth, self.pred, opts)
                    for name, opts in self.options.items()
                }

        with inline_reads() as inlined:
            graphs = build()
        if inlined and read_tasks_used(graphs.values(), inlined):
            return build()  # another step reads the pred too: its read tasks serve both, counted where they are
        return graphs

    def tables_of(self, tables: Mapping, provider: str):
        """The computed table of ``provider`` among ``tables`` (graph key -> value)."""
        return tables[self.keys[provider]]

    def finalize(self, tables: Mapping) -> dict:
        """Measure name -> value, from the computed tables (graph key -> value).

        Measures that declare a ``shared`` computation run it once per
        distinct (function, provider, parameters).
        """
        out = {}
        if self.empty_pred:
            if not bool(tables[_COVERS]):
                raise InputError("pred has no biclusters and truth covers no cell (no bicluster with both a "
                                 "row and a column): every micro measure is 0/0 and nothing can be scored")
            return {m.name: m.empty_pred for m in self.measures}
        shared: dict = {}
        keys = self.keys
        for m in self.measures:
            params = m.finalize_params(self.params[m.name])
            table = tables[keys[m.provider]]
            if m.shared is None:
                out[m.name] = m.finalize(table, **params)
                continue
            key = (m.shared, m.provider, tuple(sorted(params.items())))
            if key not in shared:
                shared[key] = m.shared(table, **params)
            out[m.name] = m.finalize(shared[key])
        return out

    def compute(self, *, progress: bool = False) -> dict:
        """Count and finalize this plan alone (see :func:`run`)."""
        return run([self], progress=progress)[0]

    def to_delayed(self):
        """A ``dask.delayed`` object that computes to :meth:`compute`'s dict.

        In-memory inputs are embedded in the graph (not scattered), so the
        object may be computed later, with other work, on any scheduler.
        """
        return dask.delayed(self.finalize, pure=False)(self.graphs())


#: Graph key of the one table an empty pred needs.
_COVERS = "truth_covers_a_cell"


def _truth_covers_a_cell(truth: xr.Dataset):
    """Delayed bool: some truth bicluster has a row and a column (always, for a co-clustering)."""
    if truth.attrs["daskbicl_kind"] == PARTITION:
        return True
    return task(bool)((truth.row_mask.any("row") & truth.col_mask.any("col")).any().data)


def plan_graphs(plans: Sequence[ScorePlan]) -> dict:
    """Graph key-> Delayed for every plan, passes over the same arrays built once.

    Graph keys of different plans are made distinct by their position.
    """
    out = {}
    with shared_passes():
        for i, plan in enumerate(plans):
            for key, graph in plan.graphs().items():
                out[(i, key)] = graph
    return out


def scored_in_process(plans: Sequence[ScorePlan]) -> bool:
    """Whether the plans' inputs are all in memory and small enough to count in this process.

    True when no input is dask-backed (stores, dask arrays) and the inputs
    hold at most ``daskbicl.in_process_bytes`` bytes in all (dask config;
    the default, 64 MiB, is about where ``benchmarks/latency.py`` measures
    the threaded scheduler catching up on 2 cores), or when the plans score
    counted tables.  Below that size building and scheduling a graph cost
    more than the counting itself, and shipping the inputs to a
    ``distributed`` cluster far more.
    """
    limit = int(config.get("in_process_bytes"))
    total = 0
    for plan in plans:
        for ds in (plan.truth, plan.pred):
            if ds is None:  # scored from counted tables
                continue
            for var in ds.data_vars.values():
                if is_dask_collection(var.variable.data):
                    return False
                total += int(var.variable.nbytes)
                if total > limit:
                    return False
    return True


def run_tables(plans: Sequence[ScorePlan], *, progress: bool = False) -> list[dict]:
    """Compute every plan's tables in one ``dask.compute``; per plan, graph key -> table.

    Small in-memory inputs (:func:`scored_in_process`) are counted in this
    process as the passes are built (:func:`~daskbicl.engine.core.eager`),
    even when a ``distributed`` Client is active; what stays lazy there is
    computed on the synchronous scheduler.  Everything else is one
    ``dask.compute`` on the active Client or the local scheduler.
    """
    if scored_in_process(plans):
        with in_process(), eager():
            graphs = plan_graphs(plans)
            lazy = [key for key, value in graphs.items() if any_lazy(value)]
            if lazy:
                graphs.update(zip(lazy, compute(*(graphs[key] for key in lazy))))
        computed = tuple(graphs.values())
    else:
        with scatter_inputs():  # built and computed together: in-memory blocks may be scattered
            graphs = plan_graphs(plans)
            computed = compute(*graphs.values(), progress=progress)
    out: list[dict] = [{} for _ in plans]
    for (i, key), value in zip(graphs, computed):
        out[i][key] = value
    return out


def run(plans: Sequence[ScorePlan], *, progress: bool = False) -> list[dict]:
    """Compute and finalize every plan; each input array is read once however many plans read it."""
    return [plan.finalize(tables) for plan, tables in zip(plans, run_tables(plans, progress=progress))]
