"""``score`` and the per-measure functions generated from the registry."""

from __future__ import annotations

import inspect
from collections.abc import Iterable

from ..engine.core import compute
from ..errors import MeasureError
from ..io.align import align
from ..io.validate import PARTITION, as_dataset
from .registry import PROVIDERS, REGISTRY, Measure, get

__all__ = ["score", "select_measures", "make_measure_function", "prepare", "finalize"]


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


def _split_params(selected: list[Measure], params: dict) -> dict[str, dict]:
    known = {p for m in selected for p in m.params}
    unknown = sorted(set(params) - known)
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        raise MeasureError(
            f"unknown parameter(s) {', '.join(unknown)} for the selected measures "
            f"(they accept: {allowed})"
        )
    return {m.name: {k: params.get(k, v) for k, v in m.params.items()} for m in selected}


def prepare(truth, pred, measures=None, **params):
    """Validate and align the inputs and build the counting graphs.

    Returns ``(selected, per_measure_params, graphs)`` where ``graphs`` maps a
    provider name to its Delayed result; used by :func:`score` and by batch
    runs that compute many pairs in one graph.
    """
    truth = as_dataset(truth, "truth")
    pred = as_dataset(pred, "pred")
    truth, pred = align(truth, pred)
    selected = select_measures(measures, truth.attrs["daskbicl_kind"], pred.attrs["daskbicl_kind"])
    per_measure = _split_params(selected, params)
    provider_options = {}
    for m in selected:
        provider_options.setdefault(m.needs, {})
    graphs = {
        name: PROVIDERS[name].build(truth, pred, **opts) for name, opts in provider_options.items()
    }
    return selected, per_measure, graphs


def finalize(selected: list[Measure], per_measure: dict, tables: dict) -> dict:
    """Finalize every selected measure from the computed tables.

    Measures that declare a ``group`` share it: it runs once per distinct
    parameter set, and each measure reads its value from the group's result.
    """
    out = {}
    groups: dict = {}
    for m in selected:
        params = per_measure[m.name]
        if m.group is None:
            out[m.name] = m.finalize(tables[m.needs], **params)
            continue
        args = {**m.group_params, **params}
        key = (m.group, m.needs, tuple(sorted(args.items())))
        if key not in groups:
            groups[key] = m.group(tables[m.needs], **args)
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
        measures).

    Returns
    -------
    dict
        Measure name -> float (or a small named record).

    Notes
    -----
    Inputs are read once: every table the measures need is counted in one
    ``dask.compute``, on the active ``dask.distributed`` Client if there is
    one, otherwise on the local threaded scheduler.

    Examples
    --------
    >>> import daskbicl
    >>> s = daskbicl.score(([0, 0, 1, 1], [0, 1, 1]), ([1, 1, 0, 0], [2, 3, 3]))
    >>> sorted(s)
    ['ari_cols', 'ari_rows', 'cari', 'ce', 'comi', 'conmi', 'enmi', 'nce']
    >>> s["cari"], s["nce"]
    (1.0, 1.0)
    """
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
    func.__doc__ = (
        f"{measure.summary}\n\n"
        "Parameters\n----------\n"
        "truth, pred : xarray.Dataset, str, os.PathLike or tuple\n"
        "    Anything :func:`daskbicl.score` accepts.\n"
        + "".join(f"{p} : float, default {d!r}\n    Measure parameter.\n" for p, d in measure.params.items())
        + "progress : bool\n    Show a progress bar while counting.\n\n"
        f"Returns\n-------\nfloat\n    In [{measure.bounds[0]}, {measure.bounds[1]}]; "
        f"{symmetric}; perfect match = {measure.perfect}.\n\n"
        f"Notes\n-----\n{inspect.cleandoc(measure.doc)}\n"
    )
    return func
