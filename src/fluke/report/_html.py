"""One self-contained HTML file: inline CSS, inline script, inline SVG, no network.

A Content-Security-Policy forbids every fetch (``default-src 'none'``) and allows only the
one stylesheet and the one script shipped here, by hash. Run data reaches the page twice,
both escaped: as HTML text in the charts and tables, and as JSON in a
``<script type="application/json">`` block that the explorer reads with ``JSON.parse``.

>>> page = render_html(ReportData(title="<b>x</b>"))
>>> page.startswith("<!doctype html>"), "<b>x</b>" in page, "default-src 'none'" in page
(True, False, True)
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from functools import cache
from importlib import resources

import orjson

from ..record import redact
from ._headline import headline_from
from ._model import SECTIONS, ReportData
from ._sections import RENDERERS, TITLES
from ._svg import esc


@cache
def _static(name: str) -> str:
    return resources.files("fluke.report").joinpath("_static", name).read_text(encoding="utf-8")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def script_json(value: object) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>``, ``&``, U+2028 or U+2029 left raw.

    >>> script_json({"t": "</script><img onerror=x>"})
    '{"t":"\\\\u003c/script\\\\u003e\\\\u003cimg onerror=x\\\\u003e"}'
    """
    text = orjson.dumps(value).decode("utf-8")
    for raw, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def redacted(data: ReportData) -> ReportData:
    """A copy of ``data`` with every string passed through :func:`fluke.record.redact`, a section
    at a time (dumped, redacted and read back), so that only one section's JSON is held at once.

    >>> redacted(ReportData(title="key sk-abcdefghijklmnopqrstu")).title
    'key [REDACTED:api-key]'
    """
    return redacted_fields(dict(data))


def redacted_fields(fields: dict) -> ReportData:
    """:func:`redacted` of the report whose fields are ``fields`` (``dict(data)``), taking them over:
    each is removed from ``fields`` as soon as its redacted copy is made, so that a caller that
    keeps nothing else of the report (``report`` does so) never holds the page's data twice, and the
    copy of one section reuses the memory of the sections already done.

    >>> fields = dict(ReportData(title="key sk-abcdefghijklmnopqrstu", warnings=["w"]))
    >>> redacted_fields(fields).title, fields
    ('key [REDACTED:api-key]', {})
    """
    done = {}
    for name in list(fields):
        value = fields.pop(name)
        if value is not None:
            adapter = _field_adapter(name)
            value = adapter.validate_python(redact(adapter.dump_python(value, mode="json")))
        done[name] = value
    return ReportData(**done)


@cache
def _field_adapter(name: str):
    from pydantic import TypeAdapter

    return TypeAdapter(ReportData.model_fields[name].annotation)


def _section_pieces(name: str, data: ReportData) -> Iterator[str]:
    """One section of the page, in the pieces its renderer gives (a board at a time, say)."""
    heading, what = TITLES[name]
    anchor = name.replace("_", "-")
    if getattr(data, name) is None:
        reason = data.missing.get(name, "nothing in this report feeds it yet")
        yield (f'<section class="card off" id="{anchor}" aria-labelledby="{anchor}-h">'
               f'<h2 id="{anchor}-h">{esc(heading)}</h2><p class="missing">Not computed: {esc(reason)}.</p></section>')
        return
    yield (f'<section class="card" id="{anchor}" aria-labelledby="{anchor}-h"><h2 id="{anchor}-h">{esc(heading)}</h2>'
           f'<p class="what">{esc(what)}</p>')
    drawn = RENDERERS[name](data)
    if isinstance(drawn, str):
        yield drawn
    else:
        yield from drawn
    yield "</section>"


_PARTS = (("happened", "What happened"), ("infer", "What we infer"), ("conditional_on", "Conditional on"),
          ("carried", "Carried from before"))


def _part(text: str, keep: int = 2) -> str:
    """The first ``keep`` clauses of a '; '-separated text, the rest behind a disclosure."""
    clauses = [c.strip() for c in text.split("; ") if c.strip()]
    if len(clauses) <= keep + 1:
        return esc(text)
    rest = "; ".join(clauses[keep:])
    return (f'{esc("; ".join(clauses[:keep]))}; <details class="rest"><summary>{len(clauses) - keep} more</summary>'
            f"{esc(rest)}</details>")


def headline_panel(data: ReportData) -> str:
    """The headline panel: each claim's sentence, then its four parts (what happened, what we
    infer, what it is conditional on, what was carried), linked to the section it summarises."""
    claims = data.headline if data.headline is not None else headline_from(data)
    if not claims and not data.warnings:
        return ('<section class="headline" id="headline" aria-labelledby="headline-h"><h2 id="headline-h">At a '
                'glance</h2><p class="missing">Nothing to summarise: no section holds data.</p></section>')
    items = [f'<li class="claim tone-warn"><p class="q">Warning</p><p class="a">{esc(w)}</p></li>'
             for w in data.warnings]
    for c in claims:
        parts = "".join(f"<dt>{esc(title)}</dt><dd>{_part(getattr(c, key))}</dd>" for key, title in _PARTS)
        more = f' <a class="more" href="#{esc(c.section)}">details</a>' if c.section else ""
        items.append(f'<li class="claim tone-{esc(c.tone)}"><p class="q">{esc(c.question)}</p>'
                     f'<p class="a">{esc(c.answer)}{more}</p><dl class="parts">{parts}</dl></li>')
    return ('<section class="headline" id="headline" aria-labelledby="headline-h"><h2 id="headline-h">At a glance'
            f'</h2><ol class="claims">{"".join(items)}</ol></section>')


def render_html(data: ReportData) -> str:
    """Render the report as one HTML document (a string); secrets are redacted first."""
    return render_redacted(redacted(data))


def render_redacted(data: ReportData) -> str:
    """:func:`render_html` of ``data`` that has already passed through :func:`redacted` (one pass
    over a large explorer instead of two, for a caller that keeps the redacted data too).

    >>> render_redacted(redacted(ReportData(title="t"))) == render_html(ReportData(title="t"))
    True
    """
    return "".join(_pieces(data))


def write_redacted(data: ReportData, out) -> int:
    """Write :func:`render_redacted` of ``data`` to ``out`` (a text file) piece by piece, never
    holding the whole page (tens of MB for a suite of 10,000 scenarios); returns the characters written.

    >>> import io
    >>> out = io.StringIO()
    >>> n = write_redacted(redacted(ReportData(title="t")), out)
    >>> out.getvalue() == render_html(ReportData(title="t")), n == len(out.getvalue())
    (True, True)
    """
    written = 0
    for piece in _pieces(data):
        for start in range(0, len(piece), _CHUNK):    # encoded a chunk at a time, not a section's whole copy
            written += out.write(piece[start:start + _CHUNK])
    return written


#: Characters handed to the file at a time by :func:`write_redacted`.
_CHUNK = 1 << 20


def _pieces(data: ReportData):
    """The page in order, a section (or the explorer's JSON) at a time."""
    css, js = _static("report.css"), _static("report.js")
    csp = (f"default-src 'none'; style-src {_sha256(css)}; script-src {_sha256(js)}; img-src data:; "
           "base-uri 'none'; form-action 'none'")
    toc = '<li><a href="#headline">At a glance</a></li>' + "".join(
        f'<li><a href="#{n.replace("_", "-")}"{"" if getattr(data, n) is not None else " class=off"}>'
        f'{esc(TITLES[n][0])}</a></li>' for n in SECTIONS)
    versions = "".join(f'<li><span class="mono">{esc(v.version[:12])}</span> {esc(v.label)} · {v.runs} runs</li>'
                       for v in data.versions)
    meta = " · ".join(esc(x) for x in (
        f"generated {data.generated_at}" if data.generated_at else "",
        f"ledger {data.ledger}" if data.ledger else "",
        f"{len(data.present())} of {len(SECTIONS)} sections computed") if x)
    yield (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'  # our own text: quotes stay literal
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(data.title)}</title><style>{css}</style></head><body>"
        '<a class="skip" href="#main">Skip to the report</a>'
        f'<header class="top"><h1>{esc(data.title)}</h1><p class="sub">{meta}</p>'
        f'<ul class="versions" aria-label="versions in this report">{versions}</ul></header>'
        f'<div class="glance">{headline_panel(data)}</div>'
        f'<div class="layout"><nav class="toc" aria-label="sections"><ol>{toc}</ol></nav>'
        '<main id="main">')
    for name in SECTIONS:
        yield from _section_pieces(name, data)
    yield ('</main></div>'
           f'<footer><p>Written by fluke (report format {data.format_version}). Every figure is conditional on '
           "the versions named above and on what each section states; trajectory text is untrusted and shown "
           "as plain text with secrets redacted.</p></footer>"
           '<script type="application/json" id="fluke-data">')
    runs = data.explorer.model_dump(mode="json")["runs"] if data.explorer else []
    yield script_json({"runs": runs})
    del runs
    yield f"</script><script>{js}</script></body></html>\n"
