"""Tests of daskbicl.plot: render real files and check what was drawn."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from daskbicl.errors import InputError  # noqa: E402
from daskbicl.kernels.bicluster.precision_recall import corrected_precision_recall  # noqa: E402
from daskbicl.measures.weighted_indices import weighted_index  # noqa: E402
from daskbicl.plot import (  # noqa: E402
    plot_comparison,
    plot_corrected_pr_space,
    plot_pr_space,
    plot_tradeoff,
    plot_tradeoff_space,
    save,
)
from daskbicl.tradeoffs.space import application_domain, compare_algorithms, optimal_tradeoff  # noqa: E402

PRE = np.array([0.9, 0.75, 0.55, 0.35, 0.2])
REC = np.array([0.15, 0.4, 0.6, 0.8, 0.97])
NAMES = ["s1", "s2", "s3", "s4", "s5"]


def _by_gid(ax, gid):
    return [a for a in ax.get_children() if a.get_gid() == gid]


def _legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def _render(fig, tmp_path, stem):
    """Save as PNG and SVG; check the files are real images; return the SVG text."""
    png = save(fig, tmp_path / "sub" / f"{stem}.png")
    svg = save(fig, tmp_path / f"{stem}.svg")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    return text


# ---------------------------------------------------------------- PR space
def test_pr_space(tmp_path):
    b, D = 30, 600
    fig = plot_pr_space(
        PRE,
        REC,
        names=NAMES,
        index="jaccard",
        lam=0.3,
        levels=(0.25, 0.5),
        truth_size=b,
        n_cells=D,
        title="my title",
    )
    ax = fig.axes[0]
    assert ax.get_xlabel() == "recall" and ax.get_ylabel() == "precision"
    assert ax.get_title() == "my title"
    (pts,) = _by_gid(ax, "results")
    np.testing.assert_array_equal(pts.get_offsets(), np.column_stack([REC, PRE]))
    assert sorted(t.get_text() for t in ax.texts if t.get_text() in NAMES) == NAMES
    # isolines: the requested levels, and every vertex lies on its level
    (cs,) = _by_gid(ax, "isolines")
    assert list(cs.levels) == [0.25, 0.5]
    for level, path in zip(cs.levels, cs.get_paths()):
        v = path.vertices
        assert len(v) > 10
        np.testing.assert_allclose(weighted_index(v[:, 1], v[:, 0], 0.3, "jaccard"), level, atol=5e-3)
    # random line at |B|/|D| and the unreachable triangle under pre = rec |B|/|D|
    (rnd,) = _by_gid(ax, "random")
    assert isinstance(rnd, Line2D) and set(rnd.get_ydata()) == {b / D}
    (tri,) = _by_gid(ax, "unreachable")
    verts = tri.get_paths()[0].vertices
    assert verts[:, 1].max() == pytest.approx(b / D)
    assert {(0.0, 0.0), (1.0, 0.0)} <= {tuple(x) for x in verts.round(12).tolist()}
    legend = _legend_texts(ax)
    assert "unreachable" in legend and "results" in legend
    assert any(t.startswith("random result (pre = |B|/|D| = 0.05)") for t in legend)
    svg = _render(fig, tmp_path, "pr")
    for gid in ("results", "isolines", "random", "unreachable"):
        assert f'id="{gid}' in svg


def test_pr_space_without_sizes_and_into_given_axes(tmp_path):
    from matplotlib.figure import Figure

    fig = Figure()
    left, right = fig.subplots(1, 2)
    out = plot_pr_space(PRE, REC, ax=right)
    assert out is fig and not left.has_data() and right.has_data()
    assert _by_gid(right, "random") == [] and _by_gid(right, "unreachable") == []
    assert right.get_title().startswith("PR space — F-measure isolines (λ = 0.5)")
    _render(fig, tmp_path, "pr2")


def test_corrected_pr_space(tmp_path):
    rs = np.array([[3, 1, 0], [2, 2, 1]])
    cs = np.array([[4, 2, 1], [1, 3, 3]])
    pc, rc = corrected_precision_recall(rs, cs, [3, 2], [4, 3], [3, 2, 1], [5, 3, 3], 100)
    fig = plot_corrected_pr_space(pc.ravel(), rc.ravel(), index="fmeasure")
    ax = fig.axes[0]
    (pts,) = _by_gid(ax, "results")
    np.testing.assert_allclose(pts.get_offsets(), np.column_stack([rc.ravel(), pc.ravel()]))
    assert "rec$^c$" in ax.get_xlabel() and "pre$^c$" in ax.get_ylabel()
    rnd = _by_gid(ax, "random")
    assert len(rnd) == 2 and {tuple(ln.get_ydata()) for ln in rnd} >= {(0, 0)}
    assert ax.get_xlim()[0] <= min(pc.min(), rc.min()) and ax.get_xlim()[1] >= 1
    assert "worse than random" in _legend_texts(ax)
    svg = _render(fig, tmp_path, "corrected")
    assert 'id="worse-than-random' in svg


# ---------------------------------------------------------------- tradeoff
@pytest.mark.parametrize("index", ["kulczynski", "fmeasure", "folke", "jaccard"])
def test_tradeoff_plot_draws_the_computed_envelope(index, tmp_path):
    t = optimal_tradeoff(PRE, REC, names=NAMES, index=index)
    dom = application_domain(PRE, REC, names=NAMES, truth_size=30, n_cells=600, index=index)
    fig = plot_tradeoff(t, domain=dom, n_grid=301)
    ax = fig.axes[0]
    lines = [a for a in ax.get_children() if isinstance(a, Line2D)]
    assert len(lines) == len(PRE) + 4  # curves + optimal + breakpoints + maximal + minimal
    assert [ln.get_gid() for ln in lines].count("curve") == len(PRE)
    (opt,) = _by_gid(ax, "optimal")
    x, y = opt.get_xdata(), opt.get_ydata()
    assert set(t.breakpoints) <= set(x) and x[0] == 0 and x[-1] == 1 and x.size >= 301
    np.testing.assert_allclose(y, t.envelope(x), atol=0)
    curves = weighted_index(PRE[None, :], REC[None, :], x[:, None], index)
    np.testing.assert_allclose(y, curves.max(axis=1), atol=1e-12)
    assert opt.get_linewidth() > max(ln.get_linewidth() for ln in _by_gid(ax, "curve"))
    (bp,) = _by_gid(ax, "breakpoints")
    np.testing.assert_array_equal(bp.get_xdata(), t.breakpoints)
    np.testing.assert_allclose(bp.get_ydata(), t.envelope(t.breakpoints))
    assert t.breakpoints.size >= 1
    # application domain: the shade lies exactly under the maximal curve
    (mx,) = _by_gid(ax, "maximal")
    np.testing.assert_allclose(mx.get_ydata(), dom.maximal_curve(mx.get_xdata()))
    (shade,) = _by_gid(ax, "uninformative")
    top = shade.get_paths()[0].vertices
    np.testing.assert_allclose(top[:, 1].max(), dom.maximal_curve(1.0))
    (mn,) = _by_gid(ax, "minimal")
    np.testing.assert_allclose(mn.get_ydata(), dom.minimal_curve(mn.get_xdata()))
    legend = _legend_texts(ax)
    assert f"optimal tradeoff (AUC = {t.auc:.3f})" in legend
    assert "breakpoints" in legend
    _check_winners_named_others_grey(ax, t)
    assert ax.get_xlabel() == "λ (importance of recall)"
    svg = _render(fig, tmp_path, f"tradeoff-{index}")
    assert 'id="optimal' in svg and 'id="breakpoints' in svg


def test_tradeoff_space_one_panel_per_index(tmp_path):
    indices = ["fmeasure", "jaccard", "folke"]
    fig = plot_tradeoff_space(PRE, REC, names=NAMES, index=indices, truth_size=30, n_cells=600, rec_min=0.3)
    assert len(fig.axes) == 3
    for ax, idx in zip(fig.axes, indices):
        t = optimal_tradeoff(PRE, REC, names=NAMES, index=idx, rec_min=0.3)
        assert len(_by_gid(ax, "curve")) == 4  # s1 removed by rec_min
        (bp,) = _by_gid(ax, "breakpoints")
        np.testing.assert_array_equal(bp.get_xdata(), t.breakpoints)
        assert len(_by_gid(ax, "maximal")) == 1
    _render(fig, tmp_path, "panels")


def test_tradeoff_space_single_index_into_ax(tmp_path):
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    assert plot_tradeoff_space(PRE, REC, index="kulczynski", ax=ax) is fig
    assert _by_gid(ax, "maximal") == [] and len(_by_gid(ax, "optimal")) == 1


def test_huge_sweep_hides_per_result_curves():
    rng = np.random.default_rng(3)
    t = optimal_tradeoff(rng.uniform(0.05, 1, 300), rng.uniform(0.05, 1, 300))
    ax = plot_tradeoff(t, show_curves=False).axes[0]
    assert _by_gid(ax, "curve") == [] and len(ax.lines) == 2


def test_comparison_plot(tmp_path):
    comp = compare_algorithms(
        {"A": (PRE[:3], REC[:3]), "B": (PRE[3:] * 0.9, REC[3:]), "C": ([0.6], [0.62])},
        index="fmeasure",
    )
    fig = plot_comparison(comp)
    ax = fig.axes[0]
    for name, t in comp.tradeoffs.items():
        (ln,) = _by_gid(ax, f"algorithm:{name}")
        np.testing.assert_allclose(ln.get_ydata(), t.envelope(ln.get_xdata()))
    bands = _by_gid(ax, "winner-band")
    assert len(bands) == len(comp.intervals)
    got = [(r.get_x(), r.get_x() + r.get_width()) for r in bands]
    want = comp.intervals[["lam_lo", "lam_hi"]].to_numpy()
    np.testing.assert_allclose(got, want, atol=1e-12)
    switches = _by_gid(ax, "switch")
    np.testing.assert_allclose(sorted(ln.get_xdata()[0] for ln in switches), comp.breakpoints)
    assert any(t.startswith("A (AUC = ") for t in _legend_texts(ax))
    _render(fig, tmp_path, "comparison")


# ---------------------------------------------------------------- errors
def test_save_formats(tmp_path):
    fig = plot_pr_space([0.5], [0.5])
    assert save(fig, tmp_path / "a" / "b" / "x.PDF").read_bytes()[:4] == b"%PDF"
    with pytest.raises(InputError, match="use a .png, .svg or .pdf suffix"):
        save(fig, tmp_path / "x.jpeg")


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: plot_pr_space([0.5, 0.2], [0.5]), "same length"),
        (lambda: plot_pr_space([1.5], [0.5]), r"within \[0, 1\]"),
        (lambda: plot_pr_space([0.5], [0.5], truth_size=3), "both truth_size and n_cells"),
        (lambda: plot_pr_space([0.5], [0.5], truth_size=30, n_cells=3), "truth_size <= n_cells"),
        (lambda: plot_pr_space([0.5], [0.5], names=["a", "b"]), "2 names for 1"),
        (lambda: plot_corrected_pr_space([1.5], [0.5]), r"within \[-inf, 1\]"),
        (lambda: plot_tradeoff_space([0.5], [0.5], index=["fmeasure", "folke"], ax=object()), "single index"),
        (lambda: plot_tradeoff_space([0.5], [0.5], index=[]), "at least one index"),
        (
            lambda: plot_tradeoff(
                optimal_tradeoff([0.5], [0.5]),
                domain=application_domain([0.5], [0.5], truth_size=2, n_cells=9, index="folke"),
            ),
            "domain is for",
        ),
    ],
)
def test_errors(call, match):
    with pytest.raises(InputError, match=match):
        call()


# ---------------------------------------------------------------- review fixes
def _extents(fig, *artists):
    """Window extents (display pixels) after a real Agg draw with the final layout."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    return [a.get_window_extent(renderer) for a in artists]


def test_pr_space_rejects_points_in_the_unreachable_region():
    b, D = 30, 600  # pre >= rec * 0.05 for any real result
    with pytest.raises(InputError, match=r"unreachable region .*do not match \|B\| = 30 and \|D\| = 600"):
        plot_pr_space([0.5, 0.01], [0.5, 0.9], names=["ok", "bad"], truth_size=b, n_cells=D)
    with pytest.raises(InputError, match="result 'bad'"):
        plot_pr_space([0.5, 0.01], [0.5, 0.9], names=["ok", "bad"], truth_size=b, n_cells=D)
    # the boundary itself is reachable: X = D has pre = |B|/|D| at rec = 1
    ax = plot_pr_space([b / D, 0.045], [1.0, 0.9], truth_size=b, n_cells=D).axes[0]
    (pts,) = _by_gid(ax, "results")
    np.testing.assert_allclose(pts.get_offsets(), [[1.0, b / D], [0.9, 0.045]])


def test_pr_space_groups_get_their_own_colour_and_legend(tmp_path):
    groups = ["A", "A", "B", "B", "B"]
    fig = plot_pr_space(PRE, REC, names=NAMES, groups=groups, truth_size=30, n_cells=600)
    ax = fig.axes[0]
    pts = _by_gid(ax, "results")
    assert [p.get_label() for p in pts] == ["A", "B"]
    np.testing.assert_array_equal(pts[0].get_offsets(), np.column_stack([REC[:2], PRE[:2]]))
    np.testing.assert_array_equal(pts[1].get_offsets(), np.column_stack([REC[2:], PRE[2:]]))
    assert not np.allclose(pts[0].get_facecolor()[0], pts[1].get_facecolor()[0])
    assert {"A", "B"} <= set(_legend_texts(ax))
    fig = plot_corrected_pr_space(PRE - 0.1, REC - 0.1, groups=groups)
    assert [p.get_label() for p in _by_gid(fig.axes[0], "results")] == ["A", "B"]
    with pytest.raises(InputError, match="1 groups for 5"):
        plot_pr_space(PRE, REC, groups=["A"])


@pytest.mark.parametrize("plot", ["pr", "corrected", "tradeoff", "comparison"])
def test_legend_is_outside_the_axes(plot, tmp_path):
    if plot == "pr":
        fig = plot_pr_space(PRE, REC, names=NAMES, truth_size=30, n_cells=600)
    elif plot == "corrected":
        fig = plot_corrected_pr_space(PRE - 0.2, REC - 0.1, names=NAMES)
    elif plot == "tradeoff":
        t = optimal_tradeoff(PRE, REC, names=NAMES)
        fig = plot_tradeoff(t, domain=application_domain(PRE, REC, names=NAMES, truth_size=30, n_cells=600))
    else:
        fig = plot_comparison(compare_algorithms({"A": (PRE[:3], REC[:3]), "B": (PRE[3:], REC[3:])}))
    ax = fig.axes[0]
    leg, box = _extents(fig, ax.get_legend(), ax)
    assert leg.y1 <= box.y0  # entirely below the axes: it covers no curve or point
    assert box.height > 150  # and the axes were not squashed to make room
    _render(fig, tmp_path, f"legend-{plot}")


def test_many_results_have_each_interval_winner_named(tmp_path):
    rng = np.random.default_rng(11)
    pre, rec = rng.uniform(0.05, 1, 25), rng.uniform(0.05, 1, 25)
    names = [f"r{k}" for k in range(25)]
    t = optimal_tradeoff(pre, rec, names=names, index="fmeasure")
    assert len(t.intervals) >= 3
    ax = plot_tradeoff(t).axes[0]
    labels = _by_gid(ax, "winner-label")
    assert [a.get_text() for a in labels] == [str(w) for w in t.intervals["winner"]]
    mids = ((t.intervals["lam_lo"] + t.intervals["lam_hi"]) / 2).to_numpy()
    np.testing.assert_allclose([a.xy[0] for a in labels], mids)
    np.testing.assert_allclose([a.xy[1] for a in labels], t.envelope(mids))
    _check_winners_named_others_grey(ax, t)
    svg = _render(ax.figure, tmp_path, "many")
    for w in t.intervals["winner"]:
        assert f"<!-- {w} -->" in svg  # matplotlib marks each drawn text in the SVG


def test_only_the_uninformative_region_is_shaded(tmp_path):
    """The region under X = D is hatched; nothing else is filled, so no region reads as 'bad' by mistake."""
    t = optimal_tradeoff(PRE, REC, names=NAMES, index="kulczynski")
    dom = application_domain(PRE, REC, names=NAMES, truth_size=30, n_cells=600, index="kulczynski")
    ax = plot_tradeoff(t, domain=dom, n_grid=201).axes[0]
    assert _by_gid(ax, "application-domain") == []
    (shade,) = _by_gid(ax, "uninformative")
    v = shade.get_paths()[0].vertices
    lam = np.unique(v[:, 0])
    top = dom.maximal_curve(lam)
    for x, y in v:  # every vertex lies on 0 or on the maximal curve
        k = np.searchsorted(lam, x)
        assert min(abs(y), abs(y - top[k])) < 1e-12
    assert shade.get_hatch()
    face = shade.get_facecolor()
    assert face.size == 0 or face[0, 3] == 0
    legend = _legend_texts(ax)
    assert "uninformative: below X = D" in legend
    assert any(t.startswith("maximal result X = D") for t in legend)
    assert any(t.startswith("minimal result") for t in legend)
    svg = _render(ax.figure, tmp_path, "domain")
    assert 'id="uninformative' in svg


def _check_winners_named_others_grey(ax, t):
    """Only the results that win an interval are named (legend + label on the optimal curve), each in a
    colour of its own; every other result is one grey legend entry."""
    from matplotlib.colors import to_rgba

    from daskbicl.plot._common import GREY

    winners = list(dict.fromkeys(str(w) for w in t.intervals["winner"]))
    legend = _legend_texts(ax)
    named = [x.split(":")[0].removeprefix("result ") for x in legend if x.startswith("result ")]
    assert named == [n for n in map(str, t.results["name"]) if n in winners]  # in the results' order
    curves = _by_gid(ax, "curve")
    colour = {str(n): to_rgba(c.get_color()) for n, c in zip(t.results["name"], curves)}
    assert all(colour[n] != to_rgba(GREY) for n in winners)
    assert len({colour[n] for n in winners}) == len(winners)  # a colour identifies a curve
    others = [n for n in map(str, t.results["name"]) if n not in winners]
    assert all(colour[n] == to_rgba(GREY) for n in others)
    if others:
        assert f"{len(others)} other result{'s' if len(others) > 1 else ''}, never best" in legend
    assert _by_gid(ax, "curve-label") == []  # no labels piled up at the right edge
    for ann in _by_gid(ax, "winner-label"):  # each winner's label is framed in its curve's colour
        assert to_rgba(ann.get_bbox_patch().get_edgecolor())[:3] == colour[ann.get_text()][:3]


def test_thirty_five_results_name_only_the_winners(tmp_path):
    rng = np.random.default_rng(3)
    pre, rec = rng.uniform(0.05, 1, 35), rng.uniform(0.05, 1, 35)
    t = optimal_tradeoff(pre, rec, names=[f"r{k}" for k in range(35)], index="fmeasure")
    fig = plot_tradeoff(t)
    ax = fig.axes[0]
    _check_winners_named_others_grey(ax, t)
    assert len(_legend_texts(ax)) <= 4 + len(t.intervals)  # optimal, breakpoints, others, one per winner
    _render(fig, tmp_path, "thirty-five")


def test_point_labels_do_not_collide(tmp_path):
    """Results close together (A0/A1 at the top, B0/B1 at the right) get labels that do not overlap."""
    pre = np.r_[np.full(5, 1.0), [0.96, 0.97, 0.88, 0.84], [0.77, 0.6, 0.46, 0.37, 0.31, 0.26, 0.22]]
    rec = np.r_[[0.02, 0.06, 0.12, 0.19, 0.28], [0.4, 0.55, 0.71, 0.89], np.ones(7)]
    names = [f"A{k}" for k in range(9)] + [f"B{k}" for k in range(7)]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = plot_pr_space(pre, rec, names=names, truth_size=1200, n_cells=38400)
    ax = fig.axes[0]
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # places the annotations' texts
    renderer = canvas.get_renderer()
    labels = _by_gid(ax, "point-label")
    assert len(labels) == len(names)
    texts = labels + [t for t in ax.texts if t not in labels]  # isoline labels too
    from matplotlib.text import Text

    boxes = [Text.get_window_extent(t, renderer) for t in texts]
    for i in range(len(labels)):
        for j in range(i + 1, len(texts)):
            assert not boxes[i].overlaps(boxes[j]), (texts[i].get_text(), texts[j].get_text())
    _render(fig, tmp_path, "labels")


def test_comparison_names_the_winner_of_each_interval():
    comp = compare_algorithms(
        {"A": (PRE[:3], REC[:3]), "B": (PRE[3:] * 0.9, REC[3:]), "C": ([0.6], [0.62])}, index="fmeasure"
    )
    ax = plot_comparison(comp).axes[0]
    labels = _by_gid(ax, "winner-label")
    assert [a.get_text() for a in labels] == list(comp.intervals["algorithm"])
    mids = ((comp.intervals["lam_lo"] + comp.intervals["lam_hi"]) / 2).to_numpy()
    best = np.max([t.envelope(mids) for t in comp.tradeoffs.values()], axis=0)
    np.testing.assert_allclose([a.xy[1] for a in labels], best)


def test_comparison_legend_explains_the_strip_and_the_switches(tmp_path):
    comp = compare_algorithms({"A": (PRE[:3], REC[:3]), "B": (PRE[3:] * 0.9, REC[3:])}, index="fmeasure")
    ax = plot_comparison(comp).axes[0]
    legend = _legend_texts(ax)
    assert "bottom strip: best algorithm per λ interval" in legend
    assert "λ where the best algorithm changes" in legend
    assert legend.count("λ where the best algorithm changes") == 1
    # the strip's colours are the algorithms' line colours
    line = {name: _by_gid(ax, f"algorithm:{name}")[0].get_color() for name in comp.tradeoffs}
    from matplotlib.colors import to_rgba

    for band, alg in zip(_by_gid(ax, "winner-band"), comp.intervals["algorithm"]):
        assert to_rgba(band.get_facecolor())[:3] == to_rgba(line[alg])[:3]


def test_pr_space_names_only_the_highlighted_results_and_shows_zero(tmp_path):
    pre = np.array([0.0, 0.9, 0.5, 0.3, 0.8])
    rec = np.array([0.0, 0.2, 0.6, 0.9, 0.3])
    names = ["zero", "w1", "w2", "w3", "loser"]
    fig = plot_pr_space(pre, rec, names=names, highlight=[False, True, True, True, False], truth_size=30,
                        n_cells=600)
    ax = fig.axes[0]
    labels = _by_gid(ax, "point-label")
    assert sorted(a.get_text() for a in labels) == ["w1", "w2", "w3"]
    for a in labels:  # each label is joined to its own point by a leader line
        assert a.arrow_patch is not None
        k = names.index(a.get_text())
        assert a.xy == (rec[k], pre[k])
    (pts,) = _by_gid(ax, "results")
    assert pts.get_facecolor()[0, 3] < 0.5 < pts.get_facecolor()[1, 3]  # faded vs named
    assert "faded: never best for any λ" in _legend_texts(ax)
    # pre = rec = 0 is drawn whole inside the frame, above the unreachable wedge
    assert ax.get_xlim()[0] < 0 and ax.get_ylim()[0] < 0
    (wedge,) = _by_gid(ax, "unreachable")
    assert pts.get_zorder() > wedge.get_zorder()
    with pytest.raises(InputError, match="2 highlight flags for 5"):
        plot_pr_space(pre, rec, highlight=[True, False])
    _render(fig, tmp_path, "highlight")


def test_sweep_figures_have_one_row_per_index_and_no_empty_panel(tmp_path):
    import daskbicl

    rng = np.random.default_rng(5)
    truth = daskbicl.biclustering(np.arange(60)[None, :] < 20, np.arange(40)[None, :] < 10)
    sweeps = []
    for shift in (0, 3):
        rows = np.array([(np.arange(60) >= shift) & (np.arange(60) < 8 + k + shift) for k in range(35)])
        cols = rng.random((35, 40)) < np.linspace(0.1, 0.6, 35)[:, None]
        sweeps.append(daskbicl.biclustering(rows, cols))
    t = daskbicl.tradeoff(truth, *sweeps, names=["A", "B"])
    indices = ["fmeasure", "jaccard", "kulczynski", "folke"]
    fig = t.plot(tmp_path / "four.png", indices=indices)
    assert len(fig.axes) == 4 * 3
    from daskbicl.plot._common import LABELS

    for row, idx in enumerate(indices):
        panels = fig.axes[3 * row: 3 * row + 3]
        assert len({round(ax.get_position().y0, 6) for ax in panels}) == 1  # the index's panels share a row
        assert all(LABELS[idx] in ax.get_title() for ax in panels)
        assert all(ax.lines for ax in panels)  # nothing empty
        for ax, alg in zip(panels[1:], ["A", "B"]):
            _check_winners_named_others_grey(ax, t.for_index(idx).optimal[alg])
    rows_y = [fig.axes[3 * r].get_position().y0 for r in range(4)]
    assert rows_y == sorted(rows_y, reverse=True)  # indices top to bottom in the order asked


GALLERY = sorted((__import__("pathlib").Path(__file__).resolve().parents[2] / "examples" / "gallery").glob("plot_*.py"))


def test_gallery_scripts_use_only_public_names():
    import re

    for script in GALLERY:
        text = script.read_text(encoding="utf-8")
        for module in re.findall(r"^\s*(?:from|import)\s+(daskbicl[\w.]*)", text, re.M):
            assert module in ("daskbicl", "daskbicl.plot", "daskbicl.batch"), (script.name, module)
        assert "sphinx_gallery" in text and "daskbicl.plot.save(" in text, f"{script.name} saves no figure"


@pytest.mark.slow
@pytest.mark.parametrize("script", GALLERY, ids=[p.stem for p in GALLERY])
def test_gallery_script_run_from_the_shell_saves_its_figure(script, tmp_path):
    import os
    import subprocess
    import sys

    root = script.parents[2]
    env = {**os.environ, "PYTHONPATH": str(root), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    figures = [line.split(": ", 1)[1] for line in done.stdout.splitlines() if line.startswith("figure: ")]
    assert figures and figures[0] == f"{script.stem}.png"
    for name in figures:
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


@pytest.mark.parametrize("plot", ["pr", "corrected", "tradeoff", "comparison"])
def test_legend_fits_inside_the_figure(plot):
    """Long legend entries must not be cut off at the figure's edges."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    groups = ["A", "A", "B", "B", "B"]
    if plot == "pr":
        fig = plot_pr_space(PRE, REC, names=NAMES, groups=groups, highlight=[1, 0, 1, 0, 1], truth_size=30,
                            n_cells=600)
    elif plot == "corrected":
        fig = plot_corrected_pr_space(PRE - 0.2, REC - 0.1, names=NAMES, groups=groups, highlight=[1, 0, 1, 0, 1])
    elif plot == "tradeoff":
        t = optimal_tradeoff(PRE, REC, names=NAMES, index="fmeasure")
        fig = plot_tradeoff(t, domain=application_domain(PRE, REC, names=NAMES, truth_size=30, n_cells=600))
    else:
        fig = plot_comparison(compare_algorithms({"A": (PRE[:3], REC[:3]), "B": (PRE[3:], REC[3:])}))
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    box = fig.axes[0].get_legend().get_window_extent(canvas.get_renderer())
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width and box.y0 >= 0, (box, fig.bbox)
