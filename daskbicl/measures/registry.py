"""Measures declared as data (after flox's ``aggregations.py``).

Each measure is one :class:`Measure` literal: its name, the *provider* (the
counting pass) it is finalized from, the finalize function, its parameters
with their constraints and docs (after scikit-learn's ``validate_params``),
and its properties (symmetric?, bounds, value for a perfect match).  One
registry dict holds them; :func:`daskbicl.score`, the per-measure functions,
the xarray accessor, the CLI, the batch manifest checks and the generated
docs all read it.

Providers are counting passes, each one :class:`Provider` record: the
per-axis tables its finalize step takes, that step, and what it computes
from two co-clusterings' contingency tables; one engine function
(:func:`daskbicl.engine.provider_graph.provider_graph`) builds each from
those fields and returns a Delayed object.  Every provider a plan needs is
computed in one ``dask.compute``, so each input is read once whatever the
number of measures.  A measure may ask its provider for specific work
through ``provider_options`` (the micro provider computes only the parts the
selected measures read); the options of all selected measures are merged.

A parameter declared ``Param(..., provider=True)`` changes how the table is
*counted* rather than how it is finalized (MOCICE-BCubed's ``method``): its
validated value joins the measure's ``provider_options`` under the
parameter's name, reaches the provider's ``finalize`` (and ``from_tables``),
is part of the graph key, and is not passed to ``finalize``.  Measures of
one request that share a provider must then agree on its value.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from ..engine.provider_graph import SOURCES, passes_of
from ..errors import MeasureError

__all__ = [
    "Boolean", "Interval", "Measure", "OneOf", "Param", "Provider", "PROVIDERS", "REGISTRY",
    "FAMILIES", "Family", "catalogue", "get", "measure_families", "readme_table", "register", "register_provider",
    "write_readme_table",
]


# --------------------------------------------------------------------------- constraints


_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


@dataclass(frozen=True)
class Interval:
    """A real number in ``[low, high]``; ``closed`` says which ends belong to it.

    Examples
    --------
    >>> Interval(0, math.inf, closed="neither").check("beta", "0.5")
    0.5
    >>> Interval(0, math.inf, closed="neither").describe()
    'a number in (0, inf)'
    """

    low: float
    high: float
    closed: str = "both"  # "both", "left", "right" or "neither"

    def describe(self) -> str:
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        return f"a number in {left}{self.low:g}, {self.high:g}{right}"

    def _inside(self, x: float) -> bool:
        lo_ok = x >= self.low if self.closed in ("both", "left") else x > self.low
        hi_ok = x <= self.high if self.closed in ("both", "right") else x < self.high
        return lo_ok and hi_ok

    def check(self, name: str, value) -> float:
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise MeasureError(f"parameter {name} must be {self.describe()}, got {value!r}") from None
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise MeasureError(f"parameter {name} must be {self.describe()}, got {value!r}")
        try:
            x = float(value)
        except OverflowError:
            raise MeasureError(f"parameter {name} must be {self.describe()}, got {value!r}") from None
        if math.isnan(x) or not self._inside(x):
            raise MeasureError(f"parameter {name} must be {self.describe()}, got {value!r}")
        return x


@dataclass(frozen=True)
class Boolean:
    """True or False; also 1/0 and the words true/false, yes/no, on/off (the CLI passes text).

    Anything else is an error, never silently truthy.

    Examples
    --------
    >>> Boolean().check("clip", "yes"), Boolean().check("clip", 0)
    (True, False)
    """

    def describe(self) -> str:
        return "a boolean (true/false or 1/0)"

    def check(self, name: str, value) -> bool:
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and value in (0, 1):
            return bool(value)
        if isinstance(value, str):
            word = value.strip().lower()
            if word in _TRUE | {"1.0"} or word in _FALSE | {"0.0"}:
                return word in _TRUE | {"1.0"}
        raise MeasureError(f"parameter {name} must be {self.describe()}, got {value!r}")


@dataclass(frozen=True)
class OneOf:
    """One of a fixed set of words (compared case-insensitively).

    Examples
    --------
    >>> OneOf(("min", "max")).check("average_method", "MAX")
    'max'
    """

    options: tuple[str, ...]

    def describe(self) -> str:
        return "one of " + ", ".join(map(repr, self.options))

    def check(self, name: str, value) -> str:
        if isinstance(value, str) and value.strip().lower() in self.options:
            return value.strip().lower()
        raise MeasureError(f"parameter {name} must be {self.describe()}, got {value!r}")


Constraint = Interval | Boolean | OneOf


@dataclass(frozen=True)
class Param:
    """A measure parameter: its default, its constraint and one line of documentation.

    ``provider=True``: the value goes to the provider (its ``finalize``,
    ``finish`` or ``from_tables``) as an option of that name, not to the
    measure's ``finalize`` (module docstring).
    """

    default: object
    constraint: Constraint
    doc: str
    provider: bool = False

    def validate(self, name: str, value):
        """``value`` checked against the constraint and converted (e.g. ``"0.5"`` -> 0.5)."""
        return self.constraint.check(name, value)


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Provider:
    """A counting pass, declared as data (after flox's ``Aggregation``).

    :func:`daskbicl.engine.provider_graph.provider_graph` builds every
    provider's graph from these fields: the map over aligned chunks, the
    tree reduction and one finalize task, in process or on a cluster.

    Attributes
    ----------
    name : str
        Key of the provider (``Measure.provider``).
    kinds : tuple of str
        The input kinds (per side) it accepts.
    tables : str, optional
        The per-axis reduced tables ``finalize`` takes (a name of
        :data:`daskbicl.engine.provider_graph.SOURCES`: ``"masks"``, the
        K x L shared-item counts; ``"memberships"``, the joint membership
        signatures), counted over the row masks and over the column masks
        of both sides (a co-clustering read as its blocks).  None: the
        provider takes two co-clusterings only (``from_tables``).
    finalize : callable, optional
        ``finalize(rows, cols, [truth_ids, pred_ids,] **options) -> table``:
        the reduced row and column tables to the provider's table.
    ids : bool
        ``finalize`` also takes the bicluster ids of truth and of pred.
    from_tables : callable, optional
        ``from_tables(row_table, col_table, **options)``: the same table
        from the row and column contingency tables of two co-clusterings;
        used for two co-clusterings (no mask pass) and to score a
        :class:`~daskbicl.measures.tables.Contingency` without the data.
    bind : callable, optional
        ``bind() -> dict``: options read from the configuration when the
        graph is built (so the workers of a cluster use the caller's
        values), passed to ``finalize`` and ``from_tables``.
    finish : callable, optional
        ``finish(rows, cols, **options) -> Delayed``, instead of
        ``finalize``: for a provider whose work after the reduction is
        more than one task (the micro-object walk: a plan,
        walking and sampling tasks), the graph of that work built from
        the two reduced tables (Delayed, or concrete in process).
    shorter_axis_later : bool
        The shorter axis's pass runs at a lower priority (-1), so its blocks
        run beside the longer axis's last merge instead of before it (a
        scheduling hint: the tables are the same).
    reads : callable, optional
        ``reads(**options) -> tuple of Read``: a provider whose tables
        depend on the measures asked for (the covers) lists the (source,
        axis) tables ``finalize(*tables, **options)`` takes, each with an
        optional step of its own
        (:func:`daskbicl.engine.provider_graph.reads_graph`); ``tables`` is
        then the source its passes are declared by.
    passes : tuple of ChunkPass
        The chunk passes (chunk kernel and combine) its graph runs; derived
        from ``tables`` and ``from_tables`` unless given (a source that
        reads two co-clusterings' contingency tables adds that pass).
    """

    name: str
    kinds: tuple[str, ...]
    description: str = ""
    tables: str | None = None
    finalize: Callable | None = None
    ids: bool = False
    from_tables: Callable | None = None
    bind: Callable[[], Mapping] | None = None
    finish: Callable | None = None
    shorter_axis_later: bool = False
    reads: Callable | None = None
    passes: tuple = ()

    def __post_init__(self):
        if self.tables is not None and self.tables not in SOURCES:
            raise ValueError(f"provider {self.name!r}: unknown tables {self.tables!r}; known: {', '.join(SOURCES)}")
        if self.finalize is not None and self.finish is not None:
            raise ValueError(f"provider {self.name!r}: finalize and finish are alternatives, declare one")
        if (self.tables is None) != (self.finalize is None and self.finish is None):
            raise ValueError(f"provider {self.name!r}: tables and finalize (or finish) are declared together "
                             "or not at all")
        if self.tables is None and self.from_tables is None:
            raise ValueError(f"provider {self.name!r} declares neither tables nor from_tables")
        if not self.passes:
            object.__setattr__(self, "passes", passes_of(self.tables, self.from_tables is not None))


def _frozen(mapping) -> Mapping:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Measure:
    """One measure: name -> provider -> finalize.

    Attributes
    ----------
    name : str
        Key in ``score`` results, function name, CLI ``--measure`` value.
    summary : str
        One line for tables, ``daskbicl measures`` and the README.
    family : str
        ``"partition"``, ``"bicluster"`` or ``"micro"``: which inputs it
        scores by default.
    provider : str
        The counting pass (a :class:`Provider` name) it is finalized from.
    finalize : callable
        ``finalize(tables, **params) -> float`` (or a small NamedTuple); with
        ``shared``, ``finalize(shared_result)``.
    symmetric : bool
        ``m(truth, pred) == m(pred, truth)``.
    bounds : (float, float)
        Range of values (``-inf``/``inf`` when unbounded).
    perfect : float
        Value when pred equals truth up to relabeling (nan: input dependent).
    params : mapping of str to Param
        Parameters with default, constraint and doc, validated before any work.
    doc : str
        Numpydoc body (formula, reference, examples) of the generated function.
    fields : tuple of str
        For record-valued measures, the names of the fields (else empty).
    shared : callable, optional
        A computation several measures share (the K x L pair table of the
        bicluster measures): ``shared(tables, **params) -> value``, run once
        per distinct (function, parameter set); ``finalize`` then receives
        its result.
    provider_options : mapping
        Keyword options for the provider's ``finalize`` (or ``finish``); merged over the
        selected measures (sets united, booleans or-ed, others must agree).
    default : bool
        Scored when no measures are named (the published measures of the
        family); the others are scored when asked for by name.
    empty_pred : float or record, optional
        The value when pred is a biclustering with no bicluster at all (an
        algorithm that found nothing; docs/guide/data-model.md): 0 for every similarity, 1 for
        the micro CE and RNIA errors.  None: the measure does not accept it.
    version : int
        The version of the measure's definition: bump when a measure's
        definition changes; batch never reuses rows of another version.
    compiled : bool
        Its computation runs numba-compiled kernels (compiled on the first
        use after an install; the command line says so before a silent
        minute).  Capability facts such as this live on the record, not in
        the modules that act on them.
    """

    name: str
    summary: str
    family: str
    provider: str
    finalize: Callable
    symmetric: bool
    bounds: tuple[float, float]
    perfect: float
    params: Mapping[str, Param] = field(default_factory=dict)
    doc: str = ""
    fields: tuple[str, ...] = ()
    shared: Callable | None = None
    provider_options: Mapping = field(default_factory=dict)
    empty_pred: object = None
    default: bool = True
    version: int = 1
    compiled: bool = False

    def __post_init__(self):
        object.__setattr__(self, "params", _frozen(self.params))
        object.__setattr__(self, "provider_options", _frozen(self.provider_options))

    @property
    def defaults(self) -> dict:
        """Parameter name -> default value."""
        return {k: p.default for k, p in self.params.items()}

    def validate_params(self, given: Mapping) -> dict:
        """Every parameter of this measure: ``given`` values checked, defaults for the rest."""
        return {k: p.validate(k, given[k]) if k in given else p.default for k, p in self.params.items()}

    def finalize_params(self, params: Mapping) -> dict:
        """The parameters ``finalize`` takes: ``params`` without the provider's (``Param.provider``)."""
        return {k: v for k, v in params.items() if k not in self.params or not self.params[k].provider}

    def options(self, params: Mapping) -> dict:
        """``provider_options`` plus the values of the provider's parameters among ``params``."""
        extra = {k: v for k, v in params.items() if k in self.params and self.params[k].provider}
        return {**self.provider_options, **extra}


REGISTRY: dict[str, Measure] = {}
PROVIDERS: dict[str, Provider] = {}


def register(measure: Measure) -> Measure:
    if measure.name in REGISTRY:
        raise ValueError(f"measure {measure.name!r} is registered twice")
    if measure.provider not in PROVIDERS:
        raise ValueError(f"measure {measure.name!r} needs unknown provider {measure.provider!r}")
    for name, param in measure.params.items():  # a default must satisfy its own constraint
        param.validate(name, param.default)
    REGISTRY[measure.name] = measure
    return measure


def register_provider(provider: Provider) -> Provider:
    PROVIDERS[provider.name] = provider
    return provider


def get(name) -> Measure:
    """The measure called ``name`` (case and surrounding spaces ignored).

    Examples
    --------
    >>> import daskbicl
    >>> get(" CARI ").name
    'cari'
    """
    if not isinstance(name, str):
        raise MeasureError(f"a measure name must be a string, got {name!r}")
    key = name.strip().lower()
    try:
        return REGISTRY[key]
    except KeyError:
        close = difflib.get_close_matches(key, list(REGISTRY), n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise MeasureError(
            f"unknown measure {name!r}.{hint} Available: {', '.join(sorted(REGISTRY))}"
        ) from None


def catalogue() -> list[dict]:
    """Every registered measure as plain data: what ``daskbicl measures --json`` prints and the docs tabulate.

    Examples
    --------
    >>> import daskbicl
    >>> row = next(r for r in catalogue() if r["name"] == "nce")
    >>> row["params"]["normalizer"]["default"], row["params"]["normalizer"]["constraint"]
    ('corrected', "one of 'corrected', 'printed', 'per_axis'")
    """
    return [
        {
            "name": m.name, "family": m.family, "summary": m.summary, "default": m.default,
            "provider": m.provider, "inputs": list(PROVIDERS[m.provider].kinds), "symmetric": m.symmetric,
            "bounds": list(m.bounds), "perfect": m.perfect, "fields": list(m.fields), "compiled": m.compiled,
            "params": {k: {"default": p.default, "constraint": p.constraint.describe(), "doc": p.doc}
                       for k, p in m.params.items()},
        }
        for m in REGISTRY.values()
    ]


# --------------------------------------------------------------------------- the measure table
@dataclass(frozen=True)
class Family:
    """One row of the README's measure table (and one docs table): what a reader needs beside the records.

    Its measures are the records declared in ``modules`` (the module of a
    record's ``finalize``) whose ``default`` flag equals ``default`` (None:
    either); ``calls`` lists functions that are not measures (the tradeoff
    space, the null model).  The names, parameters and "scored when named"
    come from the records.
    """

    title: str
    page: str
    note: str = ""
    modules: tuple[str, ...] = ()
    default: bool | None = None
    calls: str = ""


FAMILIES: tuple[Family, ...] = (
    Family("co-clustering", "coclustering.md", modules=("coclustering",)),
    Family("bicluster precision–recall", "bicluster.md",
           "raw, size-bias `_corrected` and corrected-space `_space`", ("bicluster",), True),
    Family("micro-object", "micro.md", modules=("micro",)),
    Family("tradeoff space", "tradeoff.md",
           calls="`daskbicl.tradeoff`, `weighted_index`, `optimal_tradeoff`, `compare_algorithms`, "
                 "`application_domain`"),
    Family("partition, pair-counting and bicluster-matching measures", "more.md",
           "`average_method` as scikit-learn's; `aggregate=\"pred\"`/`\"both\"` on the twelve bicluster "
           "precision–recall measures", ("information", "pairs", "bicluster"), False),
    Family("the field's per-axis measures", "field.md",
           "V-measure equal to scikit-learn's, NCA and PSI to genieclust's, RMI, NRMI and ECS to clusim's",
           ("field_partition",)),
    Family("overlapping covers and cells", "overlapping.md",
           "omega index and overlapping NMI of the row and column covers, equal to clusim's omega and cdlib's "
           "ONMI; `omega`, `csi` on cells (CSI as biclustlib); `liu_wang` is biclustlib's formula",
           ("field_bicluster",)),
    Family("recovery scores of sparse-biclustering benchmarks", "recovery.md",
           "Nicholls & Wallace's scores, equal to biclust_comp's code (its mean redundancy has a scaling "
           "error: the page says how to reproduce its number)", ("field_recovery",)),
    Family("element-centric similarity of the cells", "field.md",
           "co-clusterings and biclusterings, overlapping ones too; equal to clusim's `element_sim`, α = 0.9",
           ("field_cells",),
           calls="`daskbicl.element_scores(truth, pred, axis=\"rows\" \\| \"cols\" \\| \"cells\")` (or "
                 "`truth.bicl.element_scores(pred, axis=...)`) gives every row's, column's or cell's score as "
                 "a lazy DataArray"),
    Family("null model", "more.md",
           calls="`daskbicl.null(truth, pred, n=999, model=\"perm\" \\| \"num\" \\| \"all\", one_sided=True)`, "
                 "`daskbicl score --null 999 [--null-model num] [--two-sided]`: null mean, sd, permutation "
                 "p-value and the chance-adjusted value (with its 95 % interval) of every co-clustering measure"),
)

README_BEGIN = ("<!-- measures: generated from the measure records by "
                "`python3 -c \"from daskbicl.measures.registry import write_readme_table as w; w()\"`; "
                "edit the records, not this table -->")
README_END = "<!-- end measures -->"


def measure_families() -> list[tuple[Family, list[Measure]]]:
    """Every :data:`FAMILIES` row with its records, in registry order; every measure is in exactly one.

    Examples
    --------
    >>> import daskbicl
    >>> [m.name for m in measure_families()[0][1]][:3]
    ['cari', 'ari_rows', 'ari_cols']
    """
    rows: list[tuple[Family, list[Measure]]] = [(f, []) for f in FAMILIES]
    for m in REGISTRY.values():
        module = m.finalize.__module__.rsplit(".", 1)[-1]
        homes = [ms for f, ms in rows if module in f.modules and f.default in (None, m.default)]
        if len(homes) != 1:
            raise ValueError(f"measure {m.name!r} (records in {module!r}) is in {len(homes)} rows of "
                             "registry.FAMILIES; it must be in exactly one")
        homes[0].append(m)
    return rows


def _param_text(measures: list[Measure]) -> str:
    seen: dict[str, object] = {}
    for m in measures:
        for k, p in m.params.items():
            seen.setdefault(k, p.default)
    return ", ".join(f"`{k}` ({v!r})" for k, v in seen.items()).replace("|", "\\|")


def readme_table() -> str:
    """The README's measure table, markers included: one row per family, from :func:`measure_families`."""
    lines = [README_BEGIN, "", "| family | measures | parameters (default) |", "|---|---|---|"]
    for fam, measures in measure_families():
        named = measures and not any(m.default for m in measures)
        title = f"{fam.title}{', scored when named' if named else ''} ([page](docs/measures/{fam.page}))"
        if fam.note:
            title += f"; {fam.note}"
        listed = ", ".join(f"`{m.name}`" for m in measures)
        if fam.calls:
            listed = f"{listed}; {fam.calls}" if listed else fam.calls
        lines.append(f"| {title} | {listed} | {_param_text(measures) or '—'} |")
    return "\n".join([*lines, "", README_END])


def write_readme_table(path: str = "README.md") -> bool:
    """Replace the README's generated measure table (between the markers) by :func:`readme_table`.

    Returns whether the file changed.  Raises ValueError when the markers are missing.
    """
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start, end = text.find(README_BEGIN), text.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"{path} has no generated measure table (the markers {README_BEGIN!r} ... "
                         f"{README_END!r})")
    new = text[:start] + readme_table() + text[end + len(README_END):]
    if new != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
    return new != text
