"""Real damaged stores, made the way they get damaged: a chunk truncated, bits flipped, files deleted or edited.

Used by the bad-input catalogue (tests/test_bad_inputs.py) and the failing-environment
tests (tests/test_failures.py).  Every store starts as a real ``daskbicl.save`` of a
4,000 x 300 co-clustering in chunks of 256 labels.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np

import daskbicl

ROWS, COLS, CHUNK = 4000, 300, 256


def _edit_json(path: Path, edit) -> None:
    doc = json.loads(path.read_text())
    edit(doc)
    path.write_text(json.dumps(doc))


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


#: name -> how the copy of a good store is damaged (called with the copy's path).
DAMAGE = {
    "truncated": lambda p: os.truncate(p / "row_labels" / "c" / "1", 10),
    "flipped": lambda p: _flip(p / "row_labels" / "c" / "1"),
    "empty_chunk": lambda p: (p / "row_labels" / "c" / "1").write_bytes(b""),
    "folder_chunk": lambda p: ((p / "row_labels" / "c" / "1").unlink(), (p / "row_labels" / "c" / "1").mkdir()),
    "deleted_chunk": lambda p: (p / "row_labels" / "c" / "1").unlink(),
    "deleted_metadata": lambda p: (p / "row_labels" / "zarr.json").unlink(),
    "damaged_metadata": lambda p: (p / "row_labels" / "zarr.json").write_text("{not json"),
    "dtype_edited": lambda p: _edit_json(p / "row_labels" / "zarr.json", lambda d: d.update(data_type="int32")),
    "shape_edited": lambda p: _edit_json(p / "row_labels" / "zarr.json", lambda d: d.update(shape=[ROWS + 1000])),
    "kind_array": lambda p: _edit_json(p / "zarr.json", lambda d: d["attributes"].update(daskbicl_kind=[1, 2])),
    "kind_unknown": lambda p: _edit_json(p / "zarr.json", lambda d: d["attributes"].update(daskbicl_kind="tree")),
    "root_metadata_gone": lambda p: (p / "zarr.json").unlink(),
}


def good_labels(seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 5, ROWS), rng.integers(0, 3, COLS)


def make_stores(root: Path) -> Path:
    """``root`` with ``t.zarr`` (good), one damaged copy per :data:`DAMAGE` entry, and odd paths."""
    root.mkdir(parents=True, exist_ok=True)
    daskbicl.save(daskbicl.partition(*good_labels()), root / "t.zarr", chunk=CHUNK)
    for name, damage in DAMAGE.items():
        shutil.copytree(root / "t.zarr", root / f"{name}.zarr")
        damage(root / f"{name}.zarr")
    rng = np.random.default_rng(1)
    daskbicl.save(daskbicl.biclustering(rng.random((3, ROWS)) < 0.3, rng.random((3, COLS)) < 0.3),
                  root / "b.zarr", chunk=CHUNK)
    (root / "file.zarr").write_text("not a store")
    (root / "empty.zarr").mkdir()
    os.symlink("loop.zarr", root / "loop.zarr")  # a link to itself
    os.symlink("nowhere.zarr", root / "broken.zarr")
    import xarray as xr
    import zarr

    zarr.open_group(str(root / "plain.zarr"), mode="w").create_array("x", shape=(3,), dtype="i8")
    z, w = good_labels()
    xr.Dataset({"row_labels": ("row", z), "col_labels": ("col", w)}).chunk({"row": CHUNK}).to_zarr(
        root / "v2.zarr", zarr_format=2, consolidated=False)
    os.truncate(root / "v2.zarr" / "row_labels" / "1", 10)
    return root
