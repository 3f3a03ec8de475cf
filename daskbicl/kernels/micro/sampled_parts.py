"""The sampled parts of the micro-object step: what a graph's sampling tasks compute (numpy; numba when a
value is drawn).

When the exact walks leave a part out (not planned, or their work
allowance ran out), it is estimated from blocks of :data:`BLOCK` random
pairs of cells (:class:`~daskbicl.kernels.micro.sampling.Sampler`): a
*pilot* of :data:`PILOT` blocks per side, then as many blocks as the
pilot's variances say a 95 % half-width of the tolerance needs (at most
what ``max_work`` allows, :data:`PAIR_WORK` work units per pair of cells),
added up in block order so the digits do not depend on how blocks were
dealt into tasks.  :mod:`daskbicl.engine.micro_pass` makes these
functions tasks (docs/measures/micro.md, "Exact or sampled").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ...errors import TooLargeError
from . import estimates
from .cell_records import bcubed_nothing_covered, same_biclusters
from .micro_scores import PRF

if TYPE_CHECKING:
    from .sampling import Sampler

__all__ = ["BLOCK", "PILOT", "PAIR_WORK", "Draws", "count", "draw", "sampled", "sampler_for"]

#: Pairs of cells per sampled block, and blocks per side in the pilot.
BLOCK = 4096
PILOT = 16

#: Work units (about 10 ns) one sampled pair of cells is counted as against ``max_work``.
PAIR_WORK = 100


class Draws(NamedTuple):
    """The sampler, which parts it samples, and the sides it draws blocks of.

    Sides: ``"precision"`` and ``"recall"`` (MOCICE-BCubed, those its side
    covers), ``"coverage"`` (CE and RNIA, when any cell is covered).
    """

    sampler: Sampler
    bcubed: bool
    coverage: bool
    sides: tuple


def sampler_for(exact_coverage, exact_bcubed, rows, cols, bcubed: bool, coverage: bool) -> Draws | None:
    """The parts asked for that the exact walks did not compute are sampled; None if none.

    ``exact_coverage`` and ``exact_bcubed`` come from the exact tasks, None for a part they leave
    out: not planned, or stopped when the work allowance ran out.
    """
    bcubed = bcubed and exact_bcubed is None
    coverage = coverage and exact_coverage is None
    if not (bcubed or coverage):
        return None
    from .sampling import Sampler  # numba: loaded when a value is sampled

    sampler = Sampler.build(rows, cols)
    sides = tuple(side for side in ("precision", "recall") if bcubed and sampler.covered(side))
    sides += ("coverage",) if coverage and sampler.total > 0 else ()
    return Draws(sampler, bcubed, coverage, sides)


def _block(draws: Draws, side: str, j: int, seed_: int):
    if side == "coverage":
        return draws.sampler.coverage_block(j, BLOCK, seed_)
    return draws.sampler.block(side, j, BLOCK, seed_)


def draw(draws, first: int, stop, index: int, n_tasks: int, seed_: int) -> dict | None:
    """Blocks j in [first, stop[side]) with j = index mod n_tasks, of each drawn side: {(side, j): sums}."""
    if draws is None:
        return None
    start = first + (index - first) % n_tasks
    return {(side, j): _block(draws, side, j, seed_)
            for side in draws.sides if side in stop for j in range(start, stop[side], n_tasks)}


def _moments(blocks: dict, side: str, stop: int) -> estimates.Moments:
    return estimates.combine(blocks[(side, j)] for j in range(stop))


def _coverage(draws: Draws, blocks: dict, stop: int):
    from .coverage_estimates import combine_coverage

    return combine_coverage(draws.sampler.total, (blocks[("coverage", j)] for j in range(stop)))


def _matched(draws: Draws, overlap, limit: float, pilot) -> int | None:
    """CE's D_max when the shared-cell table is there and its matching fits the limit (else None: a bound)."""
    from .coverage_estimates import matched_cells

    if overlap is None or draws.sampler.total == 0:
        return None
    try:
        return matched_cells(pilot, overlap, limit)
    except TooLargeError:
        return None


def count(draws, overlap, target: float, limit: float, *pilots) -> dict | None:
    """Blocks per side: enough for the target half-width from the pilot, at most the work limit allows."""
    if draws is None:
        return None
    from .coverage_estimates import cells_needed

    cap = max(PILOT, int(limit // (2 * PAIR_WORK * BLOCK)))
    blocks = {key: b for p in pilots for key, b in p.items()}
    out = {}
    bcubed = [side for side in draws.sides if side != "coverage"]
    if bcubed:
        got = {side: _moments(blocks, side, PILOT) for side in bcubed}
        zero = estimates.Moments(0.0, 0.0, 1)
        need = estimates.blocks_needed(got.get("precision", zero), got.get("recall", zero), target, BLOCK)
        out.update({side: min(max(need, PILOT), cap) for side in bcubed})
    if "coverage" in draws.sides:
        pilot = _coverage(draws, blocks, PILOT)
        matched = _matched(draws, overlap, limit, pilot)
        need = -(-cells_needed(pilot, target, matched, ce=overlap is not None) // BLOCK)
        out["coverage"] = min(max(need, PILOT), cap)
    return out


def _estimate(m: estimates.Moments) -> estimates.Estimate:
    return estimates.Estimate(m.mean, estimates.half_width(m), m.samples)


def _sampled_bcubed(draws: Draws, overlap, count: dict, blocks: dict):
    """The sampled PRF (fields :class:`~daskbicl.kernels.micro.estimates.Estimate`)."""
    sides = [side for side in draws.sides if side != "coverage"]
    if not sides:
        raise bcubed_nothing_covered()
    if len(sides) == 1 or same_biclusters(overlap):  # documented conventions: exact values, never sampled
        value = 1.0 if len(sides) == 2 else 0.0
        return PRF(value, value, value)
    p = _moments(blocks, "precision", count["precision"])
    r = _moments(blocks, "recall", count["recall"])
    f1, f1_hw = estimates.f1_estimate(p, r)
    return PRF(_estimate(p), _estimate(r), estimates.Estimate(f1, f1_hw, min(p.samples, r.samples)))


def sampled(draws, overlap, count, *parts) -> tuple:
    """(sampled MOCICE-BCubed or None, sampled coverage or None); a coverage of no cell has total 0."""
    if draws is None:
        return None, None
    blocks = {key: b for p in parts for key, b in p.items()}
    prf = _sampled_bcubed(draws, overlap, count, blocks) if draws.bcubed else None
    coverage = None
    if draws.coverage:
        coverage = _coverage(draws, blocks, count.get("coverage", 0))
    return prf, coverage
