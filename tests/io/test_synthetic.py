"""daskbicl.io.synthetic: the same seed gives the same labels whatever reads them."""

import dask
import numpy as np

import daskbicl


def test_a_perturbed_store_is_the_same_whatever_the_read_tasks_cover(tmp_path):
    """The copy of an opened store is drawn per stored chunk: read in one task or in a task per stored chunk
    (the sizes a 1-thread and a many-thread cluster give), the same seed gives the same labels."""
    truth = daskbicl.random_partition(40_000, 3_000, 7, 4, seed=3, chunk=4_000)
    daskbicl.save(truth, tmp_path / "t.zarr")
    copies = []
    for setting in ({"num_workers": 1, "daskbicl.tasks_per_thread": 1}, {"daskbicl.task_bytes": 1}):
        with dask.config.set(setting):
            opened = daskbicl.open(tmp_path / "t.zarr")
            copies.append(daskbicl.perturb(opened, 0.3, seed=5, relabel=False).compute())
    one, many = copies
    assert opened.row_labels.data.numblocks == (10,)  # a task per stored chunk in the second
    for var in ("row_labels", "col_labels"):
        np.testing.assert_array_equal(one[var].values, many[var].values)
        assert 0.1 < float((one[var].values != truth[var].values).mean()) < 0.5  # really perturbed
