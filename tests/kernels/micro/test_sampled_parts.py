"""The sampled parts' steps (kernels/micro/sampled_parts.py) called as the graph calls them, on one process.

The sampler itself (its blocks, their expectations) is tested in test_sampling.py; here: what each step
of the graph gets and gives, and that the digits do not depend on how blocks are dealt into tasks.
"""

from __future__ import annotations

import numpy as np
import pytest

from daskbicl.kernels.micro import sampled_parts
from daskbicl.kernels.micro.memberships import signature_counts
from daskbicl.kernels.micro.micro_scores import bicluster_overlap


def _inputs(seed: int, k: int = 4, n: int = 50, density: float = 0.3):
    rng = np.random.default_rng(seed)
    tr, tc, pr, pc = (rng.random((k, n)) < density for _ in range(4))
    return signature_counts(tr, pr), signature_counts(tc, pc)


def _run(rows, cols, n_tasks: int, limit: float = 6e9, target: float = 0.05):
    """The graph's steps in order: sampler, pilot draws, block count, the other draws, the sums."""
    draws = sampled_parts.sampler_for(None, None, rows, cols, True, True)
    overlap = bicluster_overlap(rows, cols)
    pilot = {side: sampled_parts.PILOT for side in ("precision", "recall", "coverage")}
    pilots = [sampled_parts.draw(draws, 0, pilot, i, n_tasks, 7) for i in range(n_tasks)]
    count = sampled_parts.count(draws, overlap, target, limit, *pilots)
    rest = [sampled_parts.draw(draws, sampled_parts.PILOT, count, i, n_tasks, 7) for i in range(n_tasks)]
    return count, sampled_parts.sampled(draws, overlap, count, *pilots, *rest)


def test_only_the_parts_the_exact_walks_left_out_are_sampled():
    rows, cols = _inputs(0)
    assert sampled_parts.sampler_for(object(), object(), rows, cols, True, True) is None
    draws = sampled_parts.sampler_for(object(), None, rows, cols, True, True)
    assert draws.bcubed and not draws.coverage and "coverage" not in draws.sides
    draws = sampled_parts.sampler_for(None, object(), rows, cols, True, True)
    assert draws.coverage and not draws.bcubed and draws.sides == ("coverage",)


@pytest.mark.parametrize("seed", range(4))
def test_the_digits_do_not_depend_on_how_blocks_are_dealt(seed):
    rows, cols = _inputs(seed)
    count, (prf, coverage) = _run(rows, cols, 1)
    for n_tasks in (2, 5):
        assert _run(rows, cols, n_tasks) == (count, (prf, coverage))
    assert all(n >= sampled_parts.PILOT for n in count.values())


def test_the_block_count_stops_at_what_max_work_allows():
    rows, cols = _inputs(1)
    cap = 40
    count, _ = _run(rows, cols, 2, limit=2 * sampled_parts.PAIR_WORK * sampled_parts.BLOCK * cap, target=1e-6)
    assert count and all(n == cap for n in count.values())  # a tolerance this tight needs far more blocks
    count, _ = _run(rows, cols, 2, limit=1.0, target=1e-6)
    assert all(n == sampled_parts.PILOT for n in count.values())  # never fewer than the pilot
