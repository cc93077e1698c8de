"""Chart primitives: an SVG builder that escapes every string, linear scales, number formats.

Charts are drawn in Python as inline SVG, so the report needs no script to show them and no
chart library. Colours are CSS classes (see ``_static/report.css``), never inline styles,
so a strict Content-Security-Policy holds.

>>> svg = Svg(100, 40, title="a <b>", chart="demo")
>>> svg.text(5, 20, "<script>")
>>> out = svg.render()
>>> "<script>" in out, "&lt;script&gt;" in out, 'data-chart="demo"' in out
(False, True, True)
"""

from __future__ import annotations

import html
import math
import os
from dataclasses import dataclass
from typing import Any

from ..format import visible
from ..format import fmt_count_share, fmt_p, fmt_pct, fmt_prob  # noqa: F401  (the report's formatters)


def esc(value: Any) -> str:
    """Escape for HTML/SVG text and double-quoted attributes.

    >>> esc('a"<&>')
    'a&quot;&lt;&amp;&gt;'
    """
    return html.escape(visible(str(value)), quote=True)  # control characters shown, never kept raw


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if math.isfinite(value) else "0"






def shorten(text: str, limit: int) -> str:
    """Cut a label to ``limit`` characters with an ellipsis.

    >>> shorten("airline/really-long-name", 12)
    'airline/rea…'
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


def middle(text: str, limit: int) -> str:
    """Cut a label to ``limit`` characters in the middle, keeping its start and its end (where ids
    that share a prefix differ).

    >>> middle("airline/really-long-name-17", 16)
    'airline/…name-17'
    """
    if len(text) <= limit:
        return text
    tail = (limit - 1) // 2
    return text[: limit - 1 - tail] + "…" + text[len(text) - tail:]


def distinct(texts: list[str], limit: int) -> list[str]:
    """Labels of at most ``limit`` characters that stay as distinct as the texts they stand for.

    Each text is cut in the middle (:func:`middle`); where that makes different texts read the
    same (long ids that differ only in the middle), what those texts share at their start and at
    their end is dropped first, so the part that tells them apart is what shows (repeated, a few
    times, within each group that still reads the same).

    >>> ids = ["[telecom]service_issue_airplane_mode_on|user_abroad[PERSONA:None]",
    ...        "[telecom]service_issue_bad_sim_card|user_abroad[PERSONA:None]"]
    >>> [middle(t, 20) for t in ids]
    ['[telecom]s…ONA:None]', '[telecom]s…ONA:None]']
    >>> distinct(ids, 20)
    ['…airplane_mode_on…', '…bad_sim_card…']
    >>> distinct(["a", "b"], 20)
    ['a', 'b']
    """
    from ..record import redact_text

    texts = [redact_text(t) for t in texts]  # redacted whole first: a secret cut in two is no longer found
    out = [middle(t, limit) for t in texts]
    for _ in range(4):
        groups: dict[str, list[int]] = {}
        for i, label in enumerate(out):
            groups.setdefault(label, []).append(i)
        clashes = [g for g in groups.values() if len({texts[i] for i in g}) > 1]
        if not clashes:
            break
        for group in clashes:
            members = [texts[i] for i in group]
            start = len(os.path.commonprefix(members))
            end = len(os.path.commonprefix([t[::-1] for t in members]))
            for i, t in zip(group, members, strict=True):
                core = t[start: max(start, len(t) - end)] or t
                head = "…" if start and core is not t else ""
                tail = "…" if end and core is not t else ""
                out[i] = head + middle(core, max(limit - len(head) - len(tail), 4)) + tail
    return out


@dataclass(frozen=True)
class Scale:
    """Linear map from a data domain to a pixel range.

    >>> Scale(0, 1, 100, 300)(0.5)
    200.0
    >>> Scale(0, 10, 0, 100).ticks(5)
    [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    """

    d0: float
    d1: float
    r0: float
    r1: float

    def __call__(self, value: float) -> float:
        span = self.d1 - self.d0 or 1.0
        clipped = min(max(value, min(self.d0, self.d1)), max(self.d0, self.d1))
        return self.r0 + (clipped - self.d0) / span * (self.r1 - self.r0)

    def ticks(self, count: int = 5) -> list[float]:
        span = self.d1 - self.d0
        if span <= 0:
            return [float(self.d0)]
        raw = span / max(count, 1)
        magnitude = 10 ** math.floor(math.log10(raw))
        step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
        first = math.ceil(self.d0 / step) * step
        out, value = [], first
        while value <= self.d1 + 1e-9 * step:
            out.append(float(round(value, 10)))
            value += step
        return out


class Svg:
    """Accumulates SVG elements; every attribute value and text is escaped."""

    def __init__(self, width: float, height: float, *, title: str, chart: str, desc: str = ""):
        self.width, self.height = width, height
        self.title, self.chart, self.desc = title, chart, desc
        self.parts: list[str] = []

    def _element(self, tag: str, attrs: dict[str, Any], body: str | None = None) -> None:
        rendered = " ".join(f'{k.rstrip("_").replace("_", "-")}="{esc(_num(v) if isinstance(v, float) else v)}"'
                            for k, v in attrs.items() if v is not None)
        self.parts.append(f"<{tag} {rendered}/>" if body is None else f"<{tag} {rendered}>{body}</{tag}>")

    def rect(self, x: float, y: float, w: float, h: float, *, class_: str, tip: str | None = None,
             **attrs: Any) -> None:
        body = f"<title>{esc(tip)}</title>" if tip else None
        self._element("rect", {"x": float(x), "y": float(y), "width": float(max(w, 0.0)),
                               "height": float(max(h, 0.0)), "class": class_, **attrs}, body)

    def line(self, x1: float, y1: float, x2: float, y2: float, *, class_: str) -> None:
        self._element("line", {"x1": float(x1), "y1": float(y1), "x2": float(x2), "y2": float(y2), "class": class_})

    def circle(self, cx: float, cy: float, r: float, *, class_: str, tip: str | None = None) -> None:
        body = f"<title>{esc(tip)}</title>" if tip else None
        self._element("circle", {"cx": float(cx), "cy": float(cy), "r": float(r), "class": class_}, body)

    def text(self, x: float, y: float, text: str, *, anchor: str = "start", class_: str = "lbl",
             tip: str | None = None) -> None:
        body = esc(text) + (f"<title>{esc(tip)}</title>" if tip else "")
        self._element("text", {"x": float(x), "y": float(y), "text_anchor": anchor, "class": class_}, body)

    def path(self, d: str, *, class_: str) -> None:
        self._element("path", {"d": d, "class": class_})

    def x_axis(self, scale: Scale, y: float, *, ticks: list[float], fmt=lambda v: f"{v:g}",
               label: str = "", grid_top: float | None = None) -> None:
        """A horizontal axis at ``y`` with tick labels; optional grid lines up to ``grid_top``."""
        self.line(scale.r0, y, scale.r1, y, class_="axis")
        for t in ticks:
            x = scale(t)
            if grid_top is not None:
                self.line(x, grid_top, x, y, class_="grid")
            self.line(x, y, x, y + 4, class_="axis")
            self.text(x, y + 16, fmt(t), anchor="middle", class_="tick")
        if label:
            self.text((scale.r0 + scale.r1) / 2, y + 32, label, anchor="middle", class_="axis-label")

    def y_axis(self, scale: Scale, x: float, *, ticks: list[float], fmt=lambda v: f"{v:g}",
               label: str = "", grid_right: float | None = None) -> None:
        """A vertical axis at ``x``; optional grid lines to ``grid_right``."""
        self.line(x, scale.r0, x, scale.r1, class_="axis")
        for t in ticks:
            y = scale(t)
            if grid_right is not None:
                self.line(x, y, grid_right, y, class_="grid")
            self.line(x - 4, y, x, y, class_="axis")
            self.text(x - 7, y + 4, fmt(t), anchor="end", class_="tick")
        if label:
            cy = (scale.r0 + scale.r1) / 2
            self.parts.append(f'<text class="axis-label" text-anchor="middle" '
                              f'transform="translate({_num(x - 38)} {_num(cy)}) rotate(-90)">{esc(label)}</text>')

    def render(self) -> str:
        ident = f"svg-{esc(self.chart)}"
        desc = f'<desc id="{ident}-d">{esc(self.desc)}</desc>' if self.desc else ""
        labelled = f'aria-labelledby="{ident}-t"' + (f' aria-describedby="{ident}-d"' if self.desc else "")
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-chart="{esc(self.chart)}" '
                f'viewBox="0 0 {_num(self.width)} {_num(self.height)}" width="{_num(self.width)}" '
                f'height="{_num(self.height)}" role="img" {labelled}>'
                f'<title id="{ident}-t">{esc(self.title)}</title>{desc}')
        # one join: a chart of 10,000 cells is 15 MB, and joining the parts first would copy it twice
        return "".join((head, *self.parts, "</svg>"))
