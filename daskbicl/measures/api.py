"""``score`` and the per-measure functions generated from the registry."""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Iterable

import numpy as np

from ..engine.core import compute, scatter_inputs, shared_passes
from ..errors import MeasureError
from ..io.align import align
from ..io.validate import PARTITION, as_dataset
from .registry import PROVIDERS, REGISTRY, Measure, get

__all__ = [
    "score", "select_measures", "make_measure_function", "prepare", "finalize", "provider_options",
]


def _default_families(kind_truth: str, kind_pred: str) -> tuple[str, ...]:
    if kind_truth == PARTITION and kind_pred == PARTITION:
        return ("partition",)
    return ("bicluster", "micro")


def select_measures(measures, kind_truth: str, kind_pred: str) -> list[Measure]:
    """Resolve ``measures`` (None, a name, or names) into registry records.

    ``None`` selects every measure of the default families for the input
    kinds: co-clustering measures for two co-clusterings, bicluster and
    micro-object measures otherwise.
    """
    if measures is None:
        families = _default_families(kind_truth, kind_pred)
        selected = [m for m in REGISTRY.values() if m.family in families]
        if not selected:
            raise MeasureError(
                f"no measure for a {kind_truth} truth and a {kind_pred} pred is available"
            )
        return selected
    if isinstance(measures, str):
        measures = [measures]
    names = list(dict.fromkeys(measures))
    if not names:
        raise MeasureError("measures is empty; pass None for every applicable measure")
    selected = [get(str(n).strip().lower()) for n in names]
    for m in selected:
        kinds = PROVIDERS[m.needs].kinds
        for role, kind in (("truth", kind_truth), ("pred", kind_pred)):
            if kind not in kinds:
                raise MeasureError(
                    f"measure {m.name!r} needs co-clusterings ({' or '.join(kinds)}) but "
                    f"{role} is a {kind}"
                )
    return selected


_TRUE = {"true", "1", "1.0", "yes", "on"}
_FALSE = {"false", "0", "0.0", "no", "off"}


def _coerce(name: str, value, default):
    """``value`` as the type of the parameter's default (booleans parsed strictly).

    A boolean parameter accepts True/False, 0/1 (the CLI passes numbers) and
    the strings true/false, yes/no, on/off, 1/0; anything else is an error,
    never silently truthy.  A numeric parameter accepts numbers and numeric
    strings.
    """
    if isinstance(default, bool):
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, numbers.Real) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise MeasureError(
            f"parameter {name} must be a boolean (true/false or 1/0), got {value!r}")
    if isinstance(default, numbers.Real) and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise MeasureError(f"parameter {name} must be a number, got {value!r}") from None
    return value


def _split_params(selected: list[Measure], params: dict) -> dict[str, dict]:
    known = {p for m in selected for p in m.params}
    unknown = sorted(set(params) - known)
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        raise MeasureError(
            f"unknown parameter(s) {', '.join(unknown)} for the selected measures "
            f"(they accept: {allowed})"
        )
    return {
        m.name: {k: _coerce(k, params[k], v) if k in params else v for k, v in m.params.items()}
        for m in selected
    }


def _merge_option(provider: str, key: str, a, b):
    if isinstance(a, bool) and isinstance(b, bool):
        return a or b
    if isinstance(a, (set, frozenset)) and isinstance(b, (set, frozenset)):
        return frozenset(a) | frozenset(b)
    if a == b:
        return a
    raise ValueError(f"measures ask provider {provider!r} for conflicting {key}: {a!r} and {b!r}")


def provider_options(selected: list[Measure]) -> dict[str, dict]:
    """Provider name -> the merged ``provider_options`` of the selected measures.

    Examples
    --------
    >>> from daskbicl.measures import REGISTRY
    >>> opts = provider_options([REGISTRY["micro_rnia"], REGISTRY["e4sc"], REGISTRY["cari"]])
    >>> sorted(opts["micro"]["parts"]), opts["partition"]
    (['coverage', 'overlap'], {})
    """
    out: dict[str, dict] = {}
    for m in selected:
        opts = out.setdefault(m.needs, {})
        for key, value in m.provider_options.items():
            value = frozenset(value) if isinstance(value, (set, frozenset)) else value
            opts[key] = _merge_option(m.needs, key, opts[key], value) if key in opts else value
    return {name: dict(sorted(opts.items())) for name, opts in out.items()}


def _graph_key(provider: str, options: dict) -> str:
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


def prepare(truth, pred, measures=None, **params):
    """Validate and align the inputs and build the counting graphs.

    Returns ``(selected, per_measure_params, graphs)`` where ``graphs`` maps a
    provider's graph key (its name, with its options when it has any) to its
    Delayed result; used by :func:`score` and by batch runs that compute many
    pairs in one graph.  Each provider is built with the merged
    ``provider_options`` of the selected measures, so it computes only what
    they read.
    """
    truth = as_dataset(truth, "truth")
    pred = as_dataset(pred, "pred")
    truth, pred = align(truth, pred)
    selected = select_measures(measures, truth.attrs["daskbicl_kind"], pred.attrs["daskbicl_kind"])
    per_measure = _split_params(selected, params)
    with shared_passes():  # providers that start from the same tables share one pass
        graphs = {
            _graph_key(name, opts): PROVIDERS[name].build(truth, pred, **opts)
            for name, opts in provider_options(selected).items()
        }
    return selected, per_measure, graphs


def finalize(selected: list[Measure], per_measure: dict, tables: dict) -> dict:
    """Finalize every selected measure from the computed tables.

    Measures that declare a ``group`` share it: it runs once per distinct
    parameter set, and each measure reads its value from the group's result.
    """
    out = {}
    groups: dict = {}
    keys = {name: _graph_key(name, opts) for name, opts in provider_options(selected).items()}
    for m in selected:
        params = per_measure[m.name]
        table = tables[keys[m.needs]]
        if m.group is None:
            out[m.name] = m.finalize(table, **params)
            continue
        args = {**m.group_params, **params}
        key = (m.group, m.needs, tuple(sorted(args.items())))
        if key not in groups:
            groups[key] = m.group(table, **args)
        out[m.name] = m.finalize(groups[key])
    return out


def score(truth, pred, *, measures: str | Iterable[str] | None = None, progress: bool = False, **params) -> dict:
    """Score ``pred`` against ``truth`` with every requested measure.

    Parameters
    ----------
    truth, pred : xarray.Dataset, str, os.PathLike or tuple
        Co-clusterings or biclusterings: a Dataset in the SPEC §2 layout, the
        path or URL of a daskbicl Zarr store, or a tuple
        ``(row_labels, col_labels)`` of numpy or dask arrays.
    measures : str or list of str, optional
        Measure names (see ``daskbicl.MEASURES``); default: every measure
        that applies to the inputs (all co-clustering measures for two
        co-clusterings).
    progress : bool
        Show a progress bar on stderr while counting.
    **params
        Measure parameters (e.g. ``beta=0.5`` or ``R=2`` for bicluster
        measures, ``multiset=False`` for micro CE and RNIA).  Boolean
        parameters accept True/False, 1/0 and "true"/"false".

    Returns
    -------
    dict
        Measure name -> float (or a small named record).

    Notes
    -----
    Inputs are read once: every table the measures need is counted in one
    ``dask.compute``, on the active ``dask.distributed`` Client if there is
    one, otherwise on the local threaded scheduler.  Steps whose work grows
    with the overlap of biclusters (the micro-object measures) stop with
    :class:`~daskbicl.errors.TooLargeError` above the dask config key
    ``daskbicl.max_work`` (work units of ~10 ns; default 6e9, about a
    minute): ``with dask.config.set({"daskbicl.max_work": 1e11}): ...``,
    or ``DASK_DASKBICL__MAX_WORK=1e11`` in the environment.

    Examples
    --------
    >>> import daskbicl
    >>> s = daskbicl.score(([0, 0, 1, 1], [0, 1, 1]), ([1, 1, 0, 0], [2, 3, 3]))
    >>> sorted(s)
    ['ari_cols', 'ari_rows', 'cari', 'ce', 'comi', 'conmi', 'enmi', 'nce']
    >>> s["cari"], s["nce"]
    (1.0, 1.0)
    """
    with scatter_inputs():  # built and computed together: in-memory blocks may be scattered
        selected, per_measure, graphs = prepare(truth, pred, measures, **params)
        computed = compute(*graphs.values(), progress=progress)
    return finalize(selected, per_measure, dict(zip(graphs, computed)))


def make_measure_function(measure: Measure):
    """Build the public function ``daskbicl.<name>(truth, pred, **params)``."""

    def func(truth, pred, *, progress: bool = False, **params):
        return score(truth, pred, measures=[measure.name], progress=progress, **params)[measure.name]

    parameters = [
        inspect.Parameter("truth", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("pred", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    ]
    parameters += [
        inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY, default=d) for p, d in measure.params.items()
    ]
    parameters.append(inspect.Parameter("progress", inspect.Parameter.KEYWORD_ONLY, default=False))
    func.__signature__ = inspect.Signature(parameters)
    func.__name__ = func.__qualname__ = measure.name
    symmetric = "symmetric" if measure.symmetric else "not symmetric"
    returns = f"NamedTuple ({', '.join(measure.fields)})" if measure.fields else "float"
    func.__doc__ = (
        f"{measure.summary}\n\n"
        "Parameters\n----------\n"
        "truth, pred : xarray.Dataset, str, os.PathLike or tuple\n"
        "    Anything :func:`daskbicl.score` accepts.\n"
        + "".join(
            f"{p} : {type(d).__name__}, default {d!r}\n    {measure.param_docs.get(p, 'Measure parameter.')}\n"
            for p, d in measure.params.items()
        )
        + "progress : bool\n    Show a progress bar while counting.\n\n"
        f"Returns\n-------\n{returns}\n    In [{measure.bounds[0]}, {measure.bounds[1]}]"
        f"{' each' if measure.fields else ''}; {symmetric}; perfect match = {measure.perfect}.\n\n"
        f"Notes\n-----\n{inspect.cleandoc(measure.doc)}\n"
    )
    return func
