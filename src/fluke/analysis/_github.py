"""GitHub's two other surfaces beside the pull-request comment: the job summary and annotations.

* ``--format github-summary`` is the comment's Markdown with every row (``<details>`` keep it short to
  read), cut under :data:`SUMMARY_LIMIT`, the 1 MiB GitHub accepts in ``$GITHUB_STEP_SUMMARY``.
* ``--format github`` prints workflow commands (``::error title=…::message``), one annotation
  per reason a result gives, in one batch of at most :data:`ANNOTATIONS` (the most a check run
  takes per request; the last says how many more there are). A line break in a string from a
  run is shown as a visible escape (``\\x0a``), never written, and ``%`` (and ``:`` ``,`` in a
  title) are escaped as the runner's parser expects: a string cannot end the command or start another.

>>> print(to_annotations([("error", "gate", "refund/7: 3 of 8 runs failed"), ("warning", "a:b", "50%\\nx")]))
::error title=gate::refund/7: 3 of 8 runs failed
::warning title=a%3Ab::50%25\\x0ax
"""

from __future__ import annotations

from typing import Iterable

from ..format import safe
from ..format import bounded

#: ``$GITHUB_STEP_SUMMARY`` holds at most 1 MiB a step.
SUMMARY_LIMIT = 1_048_576
#: Annotations in one batch (a check run's update takes at most 50).
ANNOTATIONS = 50
LEVELS = ("error", "warning", "notice")


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF escaped (the runner unescapes them).

    >>> escape_data("100%\\r\\ndone")
    '100%25%0D%0Adone'
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as :func:`escape_data`, and ``:`` and ``,`` too.

    >>> escape_property("title: a, b")
    'title%3A a%2C b'
    """
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def to_annotations(items: Iterable[tuple[str, str, str]], *, limit: int = ANNOTATIONS) -> str:
    """``(level, title, message)`` as workflow commands, at most ``limit`` of them.

    Control characters are shown as escapes and long names cut (:func:`fluke.format.bounded`);
    past ``limit`` the last line is a notice saying how many were left out.
    """
    items = list(items)
    shown = items if len(items) <= limit else items[:limit - 1]
    lines = []
    for level, title, message in shown:
        level = level if level in LEVELS else "notice"
        lines.append(f"::{level} title={escape_property(bounded(safe(title, newlines=False)))}::"
                     f"{escape_data(bounded(safe(message, newlines=False)))}")
    if len(items) > limit:
        lines.append(f"::notice title=fluke::{len(items) - len(shown)} more not annotated (every one is in the job "
                     "summary and the JSON output)")
    return "\n".join(lines)
