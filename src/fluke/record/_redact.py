"""Redact secrets from untrusted strings (trajectories) before anything prints or renders them.

A plain function, shared by every output: the HTML report, ``--json`` and the terminal.
It knows the common shapes of credentials; it is a safety net, not a guarantee, and it
errs on the side of hiding (a long ``sk-…`` string is redacted even if it was not a key).

>>> redact("use AKIAIOSFODNN7EXAMPLE with password=hunter2!")
'use [REDACTED:aws-key-id] with password=[REDACTED]'
>>> redact({"Authorization": "Bearer abc.def.ghi", "n": 3})
{'Authorization': '[REDACTED]', 'n': 3}
"""

from __future__ import annotations

import re
from typing import Any

_MARK = "[REDACTED]"

#: (name, pattern) pairs; each match is replaced by ``[REDACTED:name]``.
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("private-key", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
        re.DOTALL)),
    ("aws-key-id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b")),
    ("api-key", re.compile(r"\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{16,}")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("pypi-token", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9\-_]{16,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
]
# Keep the word (Bearer, password=) so the reader sees what was hidden.
_BEARER = re.compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9\-._~+/]{8,}=*")
_ASSIGNED = re.compile(
    r"(?i)\b((?:aws_)?(?:password|passwd|pwd|secret(?:_access)?(?:_key)?|api[_-]?key|access[_-]?token|"
    r"auth[_-]?token|client[_-]?secret)\"?\s*[=:]\s*)(\"?)([^\s\"',;&]+)")
_SECRET_KEY = re.compile(
    r"(?i)^(?:password|passwd|pwd|secret|.*_secret|secret_.*|api[_-]?key|.*_api_key|access[_-]?token|"
    r"auth[_-]?token|authorization|client[_-]?secret|private[_-]?key|aws_secret_access_key)$")


#: Every pattern above needs one of these: whitespace (the bearer word, a private-key block),
#: "=" or ":" (an assignment), "A" (AWS and Google keys), "_" (GitHub tokens), or a prefix.
#: A text with none of them is returned as it is, without ten regex passes: the common case
#: of a short plain value (an identifier in a grading message). Keep it in step with them.
_MAY_HOLD = re.compile(r"[\s=:A_]|sk-|xox|pypi-|eyJ|-----")


def redact_text(text: str) -> str:
    """Replace every secret-shaped span of ``text``.

    >>> redact_text("-----BEGIN RSA PRIVATE KEY-----\\nMIIE\\n-----END RSA PRIVATE KEY----- ok")
    '[REDACTED:private-key] ok'
    >>> redact_text("key sk-proj-abcdefghijklmnopqrstuv and Bearer eyJhbGciOiJI.x")
    'key [REDACTED:api-key] and Bearer [REDACTED]'
    """
    if not text or _MAY_HOLD.search(text) is None:
        return text
    for name, pattern in _PATTERNS:
        text = pattern.sub(f"[REDACTED:{name}]", text)
    text = _BEARER.sub(lambda m: m.group(1) + m.group(2) + _MARK, text)
    return _ASSIGNED.sub(lambda m: m.group(1) + m.group(2) + _MARK, text)


def redact(value: Any) -> Any:
    """Redact strings anywhere inside ``value`` (str, dict, list, tuple); other values pass.

    A dict entry whose key names a secret (``password``, ``api_key``, ``authorization``…)
    loses its whole value when that value is a string.

    >>> redact(["sk-abcdefghijklmnopqrstu", {"password": "x", "user": "ann"}])
    ['[REDACTED:api-key]', {'password': '[REDACTED]', 'user': 'ann'}]
    """
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: (_MARK if isinstance(k, str) and isinstance(v, str) and v and _SECRET_KEY.match(k)
                    else redact(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact(v) for v in value)
    return value
