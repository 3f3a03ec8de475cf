"""NetCDF files as inputs (SPEC §2: any file with the variables), from Python and the shell."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

import daskbicl
from daskbicl.errors import StoreError

rng = np.random.default_rng(7)
Z, W = rng.integers(0, 4, 300), rng.integers(0, 3, 60)
Z2 = np.where(rng.random(300) < 0.3, rng.integers(0, 4, 300), Z)
GENES = np.array([f"g{i}" for i in range(300)])


def _partition(z, w, **coords):
    return xr.Dataset({"row_labels": ("row", z), "col_labels": ("col", w)}, coords=coords)


@pytest.mark.parametrize("engine", ["scipy", "h5netcdf"])
def test_netcdf_coclustering_scores_like_the_arrays(tmp_path, engine):
    path = tmp_path / "pred.nc"
    _partition(Z2, W).to_netcdf(path, engine=engine)
    want = daskbicl.score((Z, W), (Z2, W))
    assert daskbicl.score((Z, W), str(path)) == want
    opened = daskbicl.open(path)
    assert opened.attrs["daskbicl_kind"] == "partition"
    assert hasattr(opened.row_labels.data, "dask")  # read lazily, never loaded whole


def test_netcdf_string_labels_and_coordinates_match_by_label(tmp_path):
    order = rng.permutation(300)
    names = np.array(["a", "b", "c", "d"])
    _partition(names[Z2][order], W, row=GENES[order]).to_netcdf(tmp_path / "pred.nc", engine="h5netcdf")
    truth = daskbicl.partition(Z, W, row=GENES)
    assert daskbicl.score(truth, str(tmp_path / "pred.nc")) == daskbicl.score(truth, (Z2, W))


def test_netcdf_biclustering_and_the_shell(tmp_path):
    rows, cols = rng.random((3, 300)) < 0.3, rng.random((3, 60)) < 0.3
    ds = xr.Dataset({"row_mask": (("bicluster", "row"), rows), "col_mask": (("bicluster", "col"), cols)})
    ds.to_netcdf(tmp_path / "b.nc", engine="h5netcdf")
    assert daskbicl.score(str(tmp_path / "b.nc"), (rows, cols), measures=["jaccard", "e4sc"]) == {
        "jaccard": 1.0, "e4sc": 1.0}
    _partition(Z, W).to_netcdf(tmp_path / "t.nc", engine="scipy")
    _partition(Z2, W).to_netcdf(tmp_path / "p.nc", engine="h5netcdf")
    out = subprocess.run([sys.executable, "-m", "daskbicl", "score", str(tmp_path / "t.nc"), str(tmp_path / "p.nc"),
                          "--measure", "cari", "--json", "--scheduler", "synchronous"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert abs(__import__("json").loads(out.stdout)["cari"] - daskbicl.cari((Z, W), (Z2, W))) < 1e-15


def test_files_that_are_not_netcdf_are_named(tmp_path):
    (tmp_path / "labels.csv").write_text("cluster\n1\n2\n")
    with pytest.raises(StoreError, match=r"labels.csv is a file but not a NetCDF file.*daskbicl convert"):
        daskbicl.open(tmp_path / "labels.csv")
    good = tmp_path / "good.nc"
    _partition(Z, W).to_netcdf(good, engine="h5netcdf")
    (tmp_path / "cut.nc").write_bytes(good.read_bytes()[:200])  # truncated
    with pytest.raises(StoreError, match=r"cut.nc cannot be read as NetCDF"):
        daskbicl.open(tmp_path / "cut.nc")
    out = subprocess.run([sys.executable, "-m", "daskbicl", "score", str(tmp_path / "cut.nc"), str(good)],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
