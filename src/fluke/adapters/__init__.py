"""Read the output of agent frameworks into :class:`fluke.record.Run` objects.

No adapter imports its framework: each reads the JSON the framework wrote. Formats are
registered in :data:`FORMATS`; :func:`read_file` detects the format of a file (or takes the
one you force) and yields runs, raising :class:`fluke.errors.InputError` naming the file,
the record and the field on bad input.

>>> sorted(FORMATS)[:3]
['crewai', 'fluke', 'inspect']
"""

from ._registry import FORMATS, Format, detect_format, read_file

__all__ = ["FORMATS", "Format", "detect_format", "read_file"]
