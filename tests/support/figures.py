"""Checks of rendered figures shared by the figure tests."""

from __future__ import annotations


def outside_the_image(fig) -> list[tuple]:
    """Every legend entry, legend handle and title of ``fig``, rendered: (what, text, box, frame) for each that
    leaves the image (an empty list when everything fits)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = fig.bbox
    out = []
    texts = [("legend", t) for legend in fig.legends for t in legend.get_texts()]
    texts += [("title", ax.title) for ax in fig.axes] + [("suptitle", fig._suptitle)]
    texts += [("legend handle", h) for legend in fig.legends for h in legend.legend_handles]
    for what, artist in texts:
        if artist is None:
            continue
        box = artist.get_window_extent(renderer)
        if box.x0 < frame.x0 - 0.5 or box.x1 > frame.x1 + 0.5 or box.y0 < frame.y0 - 0.5 or box.y1 > frame.y1 + 0.5:
            out.append((what, getattr(artist, "get_text", lambda: "")(), box.bounds, frame.bounds))
    return out
