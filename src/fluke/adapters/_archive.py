"""Zip archives whose members may be Zstandard-compressed (Inspect AI's ``.eval`` logs).

Python's :mod:`zipfile` before 3.14 cannot open members stored with compression method 93
(Zstandard), which is what current Inspect AI writes. This reader takes the member's
compressed bytes from its local header and decompresses them with the standard library's
:mod:`compression.zstd` where Python has it (3.14), else with the ``zstandard`` package, a
core dependency of fluke on older Pythons (imported only when such a member is met);
stored and deflated members go through :mod:`zipfile` as usual.

>>> import io, os, tempfile, zipfile
>>> path = os.path.join(tempfile.mkdtemp(), "a.zip")
>>> with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
...     z.writestr("header.json", '{"version": 2}')
>>> archive = Archive(path)
>>> archive.names(), archive.json("header.json")
(['header.json'], {'version': 2})
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import orjson

from ..errors import InputError, require

#: The first four bytes of a zip file (a local file header).
ZIP_MAGIC = b"PK\x03\x04"
_ZSTD = 93
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")   # signature ... name length, extra length


class Archive:
    """A zip file read member by member; every problem is an InputError naming the member."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            self._zip = zipfile.ZipFile(self.path)
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, ValueError, struct.error) as exc:
            raise InputError(self.path, None, None, f"is not a readable zip archive ({exc})",
                             hint="the file may be truncated; re-export it") from None

    def names(self) -> list[str]:
        """The member names, in the order the archive lists them."""
        return self._zip.namelist()

    def read(self, name: str) -> bytes:
        """The uncompressed bytes of member ``name``."""
        try:
            info = self._zip.getinfo(name)
        except KeyError:
            raise InputError(self.path, name, None, "is not in the archive",
                             hint="the log may be unfinished or from another tool") from None
        try:
            if info.compress_type != _ZSTD:
                return self._zip.read(info)
            return self._zstd(info)
        except (
            zipfile.BadZipFile,
            OSError,
            EOFError,
            NotImplementedError,
            ValueError,
            zlib.error,
            struct.error,
        ) as exc:
            raise InputError(
                self.path,
                name,
                None,
                f"cannot be decompressed ({exc})",
                hint="the archive may be damaged; re-export it",
            ) from None

    def _zstd(self, info: zipfile.ZipInfo) -> bytes:
        with open(self.path, "rb") as fh:
            fh.seek(info.header_offset)
            header = _LOCAL_HEADER.unpack(fh.read(_LOCAL_HEADER.size))
            if header[0] != ZIP_MAGIC:
                raise ValueError("bad local header")
            fh.seek(header[-2] + header[-1], 1)   # skip the name and the extra field
            data = fh.read(info.compress_size)
        out = unzstd(data)
        if len(out) != info.file_size:
            raise ValueError(f"expected {info.file_size} bytes, got {len(out)}")
        return out

    def json(self, name: str) -> Any:
        """Member ``name`` parsed as JSON."""
        data = self.read(name)
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise InputError(self.path, name, None, f"is not valid JSON ({exc.msg})") from None


def unzstd(data: bytes) -> bytes:
    """The bytes of the Zstandard frame(s) ``data``; a damaged frame is a ValueError.

    >>> import zstandard
    >>> unzstd(zstandard.ZstdCompressor().compress(b"abc" * 3))
    b'abcabcabc'
    """
    try:
        from compression import zstd   # Python 3.14 and later
    except ImportError:
        zstd = None
    if zstd is not None:
        try:
            return zstd.decompress(data)
        except zstd.ZstdError as exc:
            raise ValueError(str(exc)) from None
    zstandard = require("zstandard", package="zstandard", extra="inspect",
                        purpose="reading Zstandard-compressed .eval archives")
    try:
        with zstandard.ZstdDecompressor().stream_reader(data) as reader:
            return reader.read()
    except zstandard.ZstdError as exc:
        raise ValueError(str(exc)) from None
