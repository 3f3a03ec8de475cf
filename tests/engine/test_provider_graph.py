"""A co-clustering against a biclustering: building the graph computes nothing, and the values are the blocks'.

The membership lists of a co-clustering's blocks (the micro measures, the
``"memberships"`` and ``"cover"`` sources) are counted by label in the one
graph (:mod:`daskbicl.engine.label_memberships`).  Checked here against a
brute-force oracle: the block masks written out from the labels (sorted
labels, the unassigned cluster last, or one cluster per unassigned entry),
counted by :func:`~daskbicl.kernels.micro.memberships.signature_counts`
(every array and dtype), and the scores of those blocks given as a
biclustering, through Python, the command line and a manifest.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import dask
import numpy as np
import pytest
from dask.callbacks import Callback

import daskbicl
from daskbicl import cli
from daskbicl.batch import ResultsDB, run_batch
from daskbicl.engine.provider_graph import Read, axis_tables, reads_graph
from daskbicl.kernels.micro.memberships import signature_counts
from daskbicl.measures.plan import ScorePlan
from daskbicl.measures.registry import PROVIDERS, REGISTRY, Provider

KINDS = ("int", "str", "float")


def _unassigned(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, (int, np.integer)) and v < 0)


def _clusters(values, policy: str) -> tuple[np.ndarray, list]:
    """Brute force: each item's cluster number and the clusters' names, as the docs define the blocks."""
    values = list(np.asarray(values, dtype=object))
    missing = [i for i, v in enumerate(values) if _unassigned(v)]
    if missing and policy == "error":
        raise daskbicl.DaskbiclError("unassigned")
    labels = sorted({v for v in values if not _unassigned(v)})
    number = {v: i for i, v in enumerate(labels)}
    out = np.array([number.get(v, -1) if not _unassigned(v) else -1 for v in values])
    names = list(labels)
    if missing and policy == "cluster":
        out[missing] = len(labels)
        names.append("unassigned")
    elif missing:  # singleton: one cluster per unassigned entry, in position order
        out[missing] = len(labels) + np.arange(len(missing))
        names += [f"unassigned{i}" for i in missing]
    return out, names


def _block_masks(z, w, policy: str):
    """The (H * L, n) and (H * L, m) masks of the blocks, block (h, l) numbered h * L + l."""
    zc, hs = _clusters(z, policy)
    wc, ls = _clusters(w, policy)
    rows = np.array([zc == h for h in range(len(hs)) for _ in range(len(ls))], bool).reshape(-1, len(z))
    cols = np.array([wc == k for _ in range(len(hs)) for k in range(len(ls))], bool).reshape(-1, len(w))
    return rows, cols


def _cover_mask(values, policy: str):
    c, names = _clusters(values, policy)
    return np.array([c == h for h in range(len(names))], bool).reshape(-1, len(values))


def _labels(rng, n: int, kind: str, share: float = 0.2):
    codes = rng.integers(0, 4, n)
    un = rng.random(n) < share
    if kind == "int":
        return np.where(un, -1, codes * 3)
    if kind == "str":
        out = np.array([f"c{c}" for c in codes], dtype=object)
        out[un] = None
        return out
    return np.where(un, np.nan, codes * 0.5)


def _pair(rng, kind: str, share: float = 0.2):
    n, m = int(rng.integers(3, 40)), int(rng.integers(3, 25))
    z, w = _labels(rng, n, kind, share), _labels(rng, m, kind, share)
    k = int(rng.integers(1, 5))
    bic = daskbicl.biclustering(rng.random((k, n)) < 0.4, rng.random((k, m)) < 0.4)
    return z, w, bic


def _with_policy(ds, policy: str):
    ds.attrs["daskbicl_unassigned"] = policy
    return ds


def _same_memberships(got, want):
    assert (got.n_truth, got.n_pred, got.n_items) == (want.n_truth, want.n_pred, want.n_items)
    for f in ("ptr", "el", "cnt", "gram"):
        a, b = getattr(got, f), getattr(want, f)
        assert a.dtype == b.dtype and np.array_equal(a, b), f  # same lists in the same order, not only the same set


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("policy", ["cluster", "singleton"])
def test_membership_lists_by_label_equal_the_block_masks(kind, policy):
    """The memberships and covers of a co-clustering's blocks counted by label equal signature_counts over the
    brute-force block masks, array for array (order and dtypes too), on either side, chunked or not."""
    rng = np.random.default_rng(len(kind) * 7 + len(policy))
    micro, cover = PROVIDERS["micro"], PROVIDERS["cover"]
    for _ in range(12):
        z, w, bic = _pair(rng, kind)
        co = _with_policy(daskbicl.partition(z, w), policy)
        rows_want, cols_want = _block_masks(z, w, policy)
        chunk = {"row": int(rng.integers(1, 9)), "col": int(rng.integers(1, 9))}
        for side in ("truth", "pred"):
            for chunked in (False, True):
                c, b = (co.chunk(chunk), bic.chunk(chunk)) if chunked else (co, bic)
                truth, pred = (c, b) if side == "truth" else (b, c)
                rows, cols = dask.compute(axis_tables(micro, truth, pred)[:2], scheduler="sync")[0]
                for got, masks, other in ((rows, rows_want, bic.row_mask.values),
                                          (cols, cols_want, bic.col_mask.values)):
                    want = signature_counts(masks, other) if side == "truth" else signature_counts(other, masks)
                    _same_memberships(got, want)
                # the cover: each label of an axis one cluster; the "memberships" read of the cells: the blocks
                for axis, values, other in (("rows", z, bic.row_mask.values), ("cols", w, bic.col_mask.values)):
                    mask = _cover_mask(values, policy)
                    want = signature_counts(mask, other) if side == "truth" else signature_counts(other, mask)
                    _same_memberships(_read(cover, truth, pred, "cover", axis), want)
                _same_memberships(_read(cover, truth, pred, "memberships", "cols"),
                                  signature_counts(cols_want, bic.col_mask.values) if side == "truth" else
                                  signature_counts(bic.col_mask.values, cols_want))


def _read(record: Provider, truth, pred, source: str, axis: str):
    """One table of ``source`` along ``axis`` as the engine reads it for a provider declaring ``reads``."""
    one = dataclasses.replace(record, reads=lambda **_: (Read(source, axis),), finalize=lambda table, **_: table)
    return dask.compute(reads_graph(one, truth, pred, {}), scheduler="sync")[0]


class _Computes(Callback):
    """Counts the computations started on the local schedulers while it is active."""

    def __init__(self):
        super().__init__()
        self.started = 0

    def _start(self, dsk):
        self.started += 1


#: The providers that read membership lists of a co-clustering's blocks (or covers) against a biclustering.
MEMBERSHIP_PROVIDERS = ["micro", "recovery", "cell_ecs", "cover"]


def _names(provider: str) -> list[str]:
    return [k for k, r in REGISTRY.items() if r.provider == provider]


@pytest.mark.parametrize("provider", MEMBERSHIP_PROVIDERS)
@pytest.mark.parametrize("policy", ["error", "cluster", "singleton"])
def test_building_the_membership_graphs_computes_nothing(provider, policy):
    """A co-clustering scored against a biclustering: building the plan's graphs starts no computation (the labels
    are counted in the graph), either way round; the graphs' values are those of the same call computed at once."""
    rng = np.random.default_rng(len(provider) + len(policy))
    z, w = _labels(rng, 50, "int", 0.0 if policy == "error" else 0.2), _labels(rng, 30, "int")
    co = _with_policy(daskbicl.partition(z, w), policy).chunk({"row": 16, "col": 8})
    w_all = np.where(w < 0, 0, w)  # the error policy: no unassigned entry
    if policy == "error":
        co = daskbicl.partition(z, w_all).chunk({"row": 16, "col": 8})
    other = daskbicl.biclustering(rng.random((3, 50)) < 0.5, rng.random((3, 30)) < 0.5).chunk({"row": 16})
    for truth, pred in ((co, other), (other, co)):
        with _Computes() as counter:
            plan = ScorePlan.build(truth, pred, measures=_names(provider), unassigned=policy)
            graphs = plan.graphs()
        assert counter.started == 0
        values = plan.finalize(dict(zip(graphs, dask.compute(*graphs.values(), scheduler="sync"))))
        want = daskbicl.score(truth.compute(), pred.compute(), measures=_names(provider), unassigned=policy)
        assert repr(values) == repr(want)


def test_the_error_policy_is_raised_from_the_graph_with_its_message():
    rng = np.random.default_rng(3)
    z = np.array([0, 1, -1, 2, 1, 0, -1, 2])
    co = daskbicl.partition(z, np.array([0, 1, 1])).chunk({"row": 3})
    other = daskbicl.biclustering(rng.random((2, 8)) < 0.5, rng.random((2, 3)) < 0.5)
    for truth, pred, side in ((co, other, "truth"), (other, co, "pred")):
        with _Computes() as counter:
            plan = ScorePlan.build(truth, pred, measures=_names("micro"))
            graphs = plan.graphs()
        assert counter.started == 0
        with pytest.raises(daskbicl.DaskbiclError, match=f"^{side} row_labels has 2 unassigned entries "):
            dask.compute(*graphs.values(), scheduler="sync")


# --------------------------------------------------------------------------- every door, against the blocks


def _values(scores: dict) -> dict:
    """Each score as text (records field by field): bit-for-bit comparison."""
    return {k: repr(tuple(v) if isinstance(v, tuple) else v) for k, v in scores.items()}


DOOR_MEASURES = _names("micro") + _names("recovery") + _names("cell_ecs")


@pytest.fixture(scope="module")
def door_stores(tmp_path_factory):
    """A co-clustering with unassigned labels and a biclustering, as Zarr stores; the co-clustering's blocks."""
    rng = np.random.default_rng(52)
    out = tmp_path_factory.mktemp("graph-build")
    z, w = _labels(rng, 120, "int"), _labels(rng, 45, "int")
    bic = daskbicl.biclustering(rng.random((4, 120)) < 0.3, rng.random((4, 45)) < 0.4)
    paths = {"co": daskbicl.save(daskbicl.partition(z, w), out / "co.zarr", chunk=32),
             "bic": daskbicl.save(bic, out / "bic.zarr", chunk=40)}
    blocks = {policy: daskbicl.biclustering(*_block_masks(z, w, policy)) for policy in ("cluster", "singleton")}
    return paths, bic, blocks


def _expected(door_stores, policy: str, co_first: bool) -> dict:
    _, bic, blocks = door_stores
    truth, pred = (blocks[policy], bic) if co_first else (bic, blocks[policy])
    return daskbicl.score(truth, pred, measures=DOOR_MEASURES)


@pytest.mark.parametrize("policy", ["cluster", "singleton"])
@pytest.mark.parametrize("co_first", [True, False])
def test_python_and_the_cli_give_the_scores_of_the_blocks(door_stores, policy, co_first):
    paths = door_stores[0]
    truth, pred = (paths["co"], paths["bic"]) if co_first else (paths["bic"], paths["co"])
    want = _expected(door_stores, policy, co_first)
    assert _values(daskbicl.score(truth, pred, measures=DOOR_MEASURES, unassigned=policy)) == _values(want)
    proc = subprocess.run([sys.executable, "-m", "daskbicl", "score", truth, pred, "--json", "--workers", "0",
                           "--unassigned", policy, "--measures", *DOOR_MEASURES],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == cli.jsonable(want)


def test_a_manifest_on_the_cluster_gives_the_scores_of_the_blocks(door_stores, tmp_path, client):
    paths = door_stores[0]
    lines = ["[truth]", f'co = "{paths["co"]}"', f'bic = "{paths["bic"]}"',
             "[pred]", f'co = "{paths["co"]}"', f'bic = "{paths["bic"]}"']
    cases = [(policy, co_first) for policy in ("cluster", "singleton") for co_first in (True, False)]
    for policy, co_first in cases:
        lines += ["[[pairs]]", f'truth = "{"co" if co_first else "bic"}"', f'pred = "{"bic" if co_first else "co"}"',
                  f"measures = {json.dumps(DOOR_MEASURES)}", f'unassigned = "{policy}"']
    manifest = tmp_path / "blocks.toml"
    manifest.write_text("\n".join(lines) + "\n")
    report = run_batch(str(manifest), str(tmp_path / "scores.sqlite"), client=client)
    assert report.failed == 0 and not report.failures, report.failures
    with ResultsDB(str(tmp_path / "scores.sqlite")) as db:
        rows = db.scores()
    for policy, co_first in cases:
        pred = paths["bic"] if co_first else paths["co"]
        stored = {r["measure"]: r["value"] for r in rows if r["pred"] == pred
                  and json.loads(r["params"]).get("unassigned", "error") == policy}
        for name, value in _expected(door_stores, policy, co_first).items():
            fields = value._asdict() if hasattr(value, "_asdict") else {None: value}
            for field, v in fields.items():
                got = stored[name if field is None else f"{name}.{field}"]
                assert (got is None and not np.isfinite(v)) or got == v, (policy, co_first, name, field)


def test_the_benchmark_runs_and_its_lists_agree():
    """benchmarks/memberships_by_label.py --quick: asserts inside that both ways give the same lists."""
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, "benchmarks/memberships_by_label.py", "--quick", "--seeds", "1"],
                         capture_output=True, text=True, timeout=600, env=env, cwd=root)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "label/mask" in out.stdout


# --------------------------------------------------------------------------- the micro provider is a record


def _low_priority_tasks(graph) -> list[str]:
    """The function names of the tasks in layers annotated priority -1."""
    out = []
    for layer in graph.__dask_graph__().layers.values():
        if (getattr(layer, "annotations", None) or {}).get("priority") == -1:
            out += [str(k[0] if isinstance(k, tuple) else k).rsplit("-", 5)[0] for k in layer]
    return sorted(out)


@pytest.mark.parametrize("rows, cols", [(60, 40), (40, 60)])
def test_the_micro_record_keeps_the_shorter_axis_pass_at_a_lower_priority(rows, cols):
    """The record's graph puts the same tasks at priority -1 as the micro engine's own builder (the shorter
    axis's membership pass), and the label pass of a co-clustering likewise."""
    from daskbicl.engine.micro_pass import micro_graph
    from daskbicl.engine.provider_graph import provider_graph

    rng = np.random.default_rng(rows)
    chunks = {"row": 16, "col": 16}
    t = daskbicl.biclustering(rng.random((3, rows)) < .4, rng.random((3, cols)) < .4).chunk(chunks)
    p = daskbicl.biclustering(rng.random((2, rows)) < .4, rng.random((2, cols)) < .4).chunk(chunks)
    options = {"parts": frozenset({"overlap", "coverage"}), "method": "auto"}
    want = _low_priority_tasks(micro_graph(t, p, parts=options["parts"]))
    assert want.count("signature_counts") == -(-min(rows, cols) // 16)
    assert _low_priority_tasks(provider_graph(PROVIDERS["micro"], t, p, options)) == want
    co = daskbicl.partition(rng.integers(0, 3, rows), rng.integers(0, 2, cols)).chunk(chunks)
    labelled = _low_priority_tasks(provider_graph(PROVIDERS["micro"], co, p, options))
    assert labelled == sorted(x.replace("signature_counts", "label_memberships").replace(
        "merge_memberships", "merge_label_memberships") for x in want)


def test_no_provider_builds_its_own_graph():
    """Every provider is built by provider_graph from its fields: the record has no field for a build function
    taking the inputs, and each registered provider declares per-axis tables or contingency tables."""
    fields = {f.name for f in dataclasses.fields(Provider)}
    assert "graph" not in fields and {"tables", "finalize", "finish", "from_tables", "reads"} <= fields
    for name, record in PROVIDERS.items():
        assert record.tables is not None or record.from_tables is not None, name
        assert (record.finalize is None) != (record.finish is None) or record.tables is None, name
    with pytest.raises(ValueError, match="finalize and finish are alternatives"):
        Provider(name="both", kinds=("partition",), tables="memberships", finalize=len, finish=len)


@pytest.mark.parametrize("co_first", [True, False])
def test_the_error_policy_gives_the_same_message_through_python_and_the_cli(door_stores, co_first):
    """Unassigned labels under the default "error" policy: raised from the graph, one line from the CLI (exit 2)."""
    paths = door_stores[0]
    truth, pred = (paths["co"], paths["bic"]) if co_first else (paths["bic"], paths["co"])
    side = "truth" if co_first else "pred"
    with pytest.raises(daskbicl.DaskbiclError) as err:
        daskbicl.score(truth, pred, measures=DOOR_MEASURES)
    assert str(err.value).startswith(f"{side} row_labels has ")
    proc = subprocess.run([sys.executable, "-m", "daskbicl", "score", truth, pred, "--json", "--workers", "0",
                           "--measures", *DOOR_MEASURES], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    line = proc.stderr.strip().splitlines()[-1]  # the CLI words the hint as its options (--unassigned cluster)
    assert line.startswith("daskbicl: error: " + str(err.value).split(";")[0] + ";") and "--unassigned" in line


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("policy", ["cluster", "singleton"])
def test_two_coclusterings_membership_lists_by_label_equal_their_block_masks(kind, policy):
    """The cells' membership lists of two co-clusterings (the cover provider's "memberships" read) counted by label
    on both sides equal signature_counts over both sides' brute-force block masks, array for array."""
    rng = np.random.default_rng(len(kind) * 5 + len(policy))
    for _ in range(10):
        n, m = int(rng.integers(1, 30)), int(rng.integers(1, 20))
        zt, wt, zp, wp = (_labels(rng, x, kind) for x in (n, m, n, m))
        truth = _with_policy(daskbicl.partition(zt, wt), policy)
        pred = _with_policy(daskbicl.partition(zp, wp), policy)
        (tr, tc), (pr, pc) = _block_masks(zt, wt, policy), _block_masks(zp, wp, policy)
        chunk = {"row": int(rng.integers(1, 9)), "col": int(rng.integers(1, 9))}
        for t, p in ((truth, pred), (truth.chunk(chunk), pred.chunk(chunk))):
            _same_memberships(_read(PROVIDERS["cover"], t, p, "memberships", "rows"), signature_counts(tr, pr))
            _same_memberships(_read(PROVIDERS["cover"], t, p, "memberships", "cols"), signature_counts(tc, pc))


@pytest.mark.parametrize("policy", ["error", "cluster", "singleton"])
def test_building_the_cells_of_two_coclusterings_computes_nothing(policy):
    rng = np.random.default_rng(8)
    share = 0.0 if policy == "error" else 0.2
    truth = _with_policy(daskbicl.partition(_labels(rng, 40, "int", share), _labels(rng, 20, "int", share)), policy)
    pred = _with_policy(daskbicl.partition(_labels(rng, 40, "int", share), _labels(rng, 20, "int", share)), policy)
    t, p = truth.chunk({"row": 8, "col": 8}), pred.chunk({"row": 8, "col": 8})
    with _Computes() as counter:
        plan = ScorePlan.build(t, p, measures=_names("cover"), unassigned=policy)
        graphs = plan.graphs()
    assert counter.started == 0
    values = plan.finalize(dict(zip(graphs, dask.compute(*graphs.values(), scheduler="sync"))))
    (tr, tc), (pr, pc) = (_block_masks(ds.row_labels.values, ds.col_labels.values, policy) for ds in (truth, pred))
    cells = ["omega", "csi"]  # the cells' measures: those of the blocks given as biclusterings
    want = daskbicl.score(daskbicl.biclustering(tr, tc), daskbicl.biclustering(pr, pc), measures=cells)
    assert repr({k: values[k] for k in cells}) == repr(want)
