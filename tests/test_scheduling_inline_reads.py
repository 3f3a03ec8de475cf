"""A pred's blocks are read by the counting tasks themselves (daskbicl.scheduling.read_inline).

On a cluster a read task and the counting task that takes its block may run
on different workers, and then the block travels between them.  A truth's
reads stay tasks of their own (a batch's pairs share them); a pred's blocks
are read where they are counted, unless another step of the same graph
reads the pred too (its read tasks then serve every step, as before).
"""

from __future__ import annotations

import numpy as np
import pytest

import daskbicl
from daskbicl.codes import coding_of
from daskbicl.scheduling import describe_step


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("inline")
    rng = np.random.default_rng(11)
    z, w = rng.integers(0, 5, 40_000), rng.integers(0, 4, 3_000)
    truth = daskbicl.partition(z, w)
    pred = daskbicl.perturb(truth, 0.3, seed=2).compute()  # in memory: saved in the same chunks as truth
    daskbicl.save(truth, root / "truth.zarr", chunk=5_000)
    daskbicl.save(pred, root / "pred.zarr", chunk=5_000)
    return root, truth, pred


def _read_names(path) -> set[str]:
    ds = daskbicl.open(path)
    return {coding_of(ds[v].data).codes.name for v in ("row_labels", "col_labels")}


def _stream_keys(client, run) -> list:
    from distributed import get_task_stream

    with get_task_stream(client) as stream:
        value = run()
    return value, [r["key"] for r in stream.data]


def _name(key) -> str:
    return str(key[0] if isinstance(key, (tuple, list)) else key)


@pytest.mark.parametrize("measures", [["cari", "nce", "ari_rows"], None], ids=["co-clustering tables", "every default"])
def test_the_pred_is_read_where_it_is_counted(pair, client, measures):
    root, truth, pred = pair
    expected = daskbicl.score(truth.compute(), pred.compute(), measures=measures)
    value, keys = _stream_keys(client, lambda: daskbicl.score(root / "truth.zarr", root / "pred.zarr",
                                                              measures=measures))
    assert value == pytest.approx(expected, rel=1e-12, abs=1e-15)
    names = [_name(k) for k in keys]
    truth_reads = [n for n in names if any(n == t for t in _read_names(root / "truth.zarr"))]
    pred_reads = [n for n in names if any(n == p for p in _read_names(root / "pred.zarr"))]
    assert truth_reads and not pred_reads
    assert any("-row_labels-block-" in n for n in names)  # counting tasks named after what they read


def test_a_pred_another_step_reads_keeps_its_read_tasks_and_each_chunk_is_read_once(pair, client):
    """Every measure a co-clustering pair has: some steps read the labels outside the counting passes."""
    from daskbicl.errors import MeasureError
    from daskbicl.measures import REGISTRY
    from daskbicl.measures.request import select_measures

    def applies(name):
        try:
            return bool(select_measures([name], "partition", "partition"))
        except MeasureError:
            return False

    root, truth, pred = pair
    every = [name for name in REGISTRY if applies(name)]
    assert len(every) > 40
    value, keys = _stream_keys(client, lambda: daskbicl.score(root / "truth.zarr", root / "pred.zarr",
                                                              measures=every))
    pred_names = _read_names(root / "pred.zarr")
    reads = [tuple(k) for k in keys if isinstance(k, (tuple, list)) and _name(k) in pred_names]
    assert reads and len(reads) == len(set(reads))
    assert not any("-row_labels-block-" in _name(k) for k in keys)
    in_memory = daskbicl.score(truth.compute(), pred.compute(), measures=every)
    assert value.keys() == in_memory.keys()
    for name in every:  # per measure: pytest.approx compares no dict of records (PRF, tuples) since pytest 9.2
        assert np.asarray(value[name], float) == pytest.approx(np.asarray(in_memory[name], float),
                                                               rel=1e-9, abs=1e-12, nan_ok=True), name


def test_a_store_against_itself_is_read_once_by_read_tasks(pair, client):
    root, truth, _ = pair
    value, keys = _stream_keys(client, lambda: daskbicl.score(root / "truth.zarr", root / "truth.zarr",
                                                              measures=["cari"]))
    assert value == {"cari": 1.0}
    names = _read_names(root / "truth.zarr")
    reads = [tuple(k) for k in keys if isinstance(k, (tuple, list)) and _name(k) in names]
    assert reads and len(reads) == len(set(reads))


def test_a_failed_counting_task_names_what_it_read():
    assert describe_step("_count_block-row_labels-block-7-0123abcd") == "reading and counting row_labels block 7"
    assert describe_step(("open_dataset-row_labels-abc", 3)) == "reading row_labels chunk 3"


def test_a_store_opened_as_pred_then_as_truth_keeps_its_role(pair, client, tmp_path):
    """The same store opened as a pred and later as a truth (same array names): the truth's reads stay its own,
    and an error names it as the truth (found when a damaged store was scored both ways in one process)."""
    import shutil

    from daskbicl.errors import StoreReadError

    root, truth, _ = pair
    bad = tmp_path / "bad.zarr"
    shutil.copytree(root / "truth.zarr", bad)
    chunk = bad / "row_labels" / "c" / "1"
    chunk.write_bytes(bytes(b ^ 0xFF for b in chunk.read_bytes()))
    with pytest.raises(StoreReadError, match="cannot read pred"):
        daskbicl.score(root / "truth.zarr", bad, measures=["cari"])
    with pytest.raises(StoreReadError, match="cannot read truth"):
        daskbicl.score(bad, root / "pred.zarr", measures=["cari"])
