"""The work budget of the micro-object steps (numpy only; no dask config is read here).

Work is counted in units of about 10 ns of single-core numpy time; a step
whose estimated work exceeds ``max_work`` raises :class:`TooLargeError`
through :func:`too_large`, whose message names the dask config key the engine
reads (``daskbicl.max_work``, default in ``daskbicl/daskbicl.yaml``) and a value
to set.
"""

from __future__ import annotations

from ..errors import TooLargeError

__all__ = [
    "MAX_WORK_KEY",
    "SECONDS_PER_UNIT",
    "UNIT_CANDIDATE",
    "UNIT_PAIR",
    "UNIT_SUBSET",
    "too_large",
]


#: Default limit on the estimated work of a join or of a finalize, in units
#: of about 10 ns of single-core numpy time (so ~1 minute).  Memory stays
#: bounded (chunks of ~2**21 entries) whatever the work.
DEFAULT_MAX_WORK: float = 6e9


#: The dask config key through which :func:`daskbicl.score`, the CLI and
#: batch runs set ``max_work`` (kernels take it as an argument; this module
#: never imports dask).
MAX_WORK_KEY = "daskbicl.max_work"


#: Seconds of single-core time per work unit (the unit of ``max_work``).
SECONDS_PER_UNIT = 1e-8


# Work units (~10 ns each) per entry of each method, measured on 10^4..10^5
# matrices: a level-wise candidate, a direct row x column pair, an
# enumerated subset (sort-based).
UNIT_CANDIDATE, UNIT_PAIR, UNIT_SUBSET = 20.0, 3.0, 8.0


def _duration(work: float) -> str:
    sec = work * SECONDS_PER_UNIT
    if sec < 120:
        return f"{sec:.2g} s"
    if sec < 7200:
        return f"{sec / 60:.2g} min"
    if sec < 2 * 86400:
        return f"{sec / 3600:.2g} h"
    return f"{sec / 86400:.2g} days"


def too_large(what: str, work: float | None, max_work: float, advice: str = "") -> TooLargeError:
    """The :class:`TooLargeError` for a step whose estimated work exceeds ``max_work``.

    ``work`` is the estimate (None when only "more than max_work" is known);
    ``advice`` is appended.  The message names the dask config key that
    raises the limit.

    Examples
    --------
    >>> print(too_large("joining 3 x 4 classes", 3e12, 6e9))  # doctest: +NORMALIZE_WHITESPACE
    joining 3 x 4 classes needs ~3e+12 work units (about 8.3 h of single-core time),
    more than max_work=6e+09 (about 60 s). To run it anyway raise the limit, e.g.
    dask.config.set({'daskbicl.max_work': 3e+12}) around daskbicl.score, or
    DASK_DASKBICL__MAX_WORK=3e+12 in the environment of the CLI (the max_work
    argument of the kernel functions); or score fewer or less overlapping
    biclusters.
    """
    if work is None:
        need, suggest = f"more than max_work={max_work:.3g} work units", 10 * max_work
        head = f"{what} needs {need} (about {_duration(max_work)})"
    else:
        suggest = float(f"{work * 1.005:.2g}")
        suggest = suggest if suggest >= work else float(f"{work * 1.05:.2g}")
        head = (f"{what} needs ~{work:.3g} work units (about {_duration(work)} of single-core "
                f"time), more than max_work={max_work:.3g} (about {_duration(max_work)})")
    env = "DASK_" + MAX_WORK_KEY.upper().replace(".", "__")
    return TooLargeError(
        f"{head}. To run it anyway raise the limit, e.g. "
        f"dask.config.set({{'{MAX_WORK_KEY}': {suggest:.3g}}}) around daskbicl.score, or "
        f"{env}={suggest:.3g} in the environment of the CLI (the max_work argument of the "
        "kernel functions); or score fewer or less overlapping biclusters."
        f"{' ' + advice if advice else ''}")
