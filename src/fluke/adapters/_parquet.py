"""A fluke Parquet dataset (a folder ``fluke export --format parquet`` wrote): its runs, read back
exactly as the fluke JSONL reader reads the lines of ``fluke export`` (the same runs, the same hashes).

Rows are read a batch at a time from each file of the runs table, in the dataset's order (by
version partition, then file, then row); they are numbered from 1 across the dataset, and an
error names the dataset, the row and the field.

>>> sniff({"scenario": "s"})
False
"""

from __future__ import annotations

from typing import Any, Iterator

import orjson

from ..errors import InputError
from ..record import Prepared, Run
from ._reader import Reader

#: Rows read from a file at a time.
BATCH = 4096


def sniff(doc: Any) -> bool:
    """A :class:`fluke.lake.Dataset` (the registry opens a folder holding the manifest as one)."""
    from ..lake._layout import Dataset

    return isinstance(doc, Dataset)


def read(doc: Any, *, file: str, identity: dict[str, Any], prepared: bool = False) -> Iterator[Run | Prepared]:
    """Yield the dataset's runs; with ``prepared``, the plain ones as :class:`~fluke.record.Prepared` runs."""
    from ..lake._layout import pyarrow
    from ..record import LinePreparer
    from ._fluke_jsonl import _one

    pyarrow()
    import pyarrow.parquet as pq

    fast = LinePreparer(file, identity) if prepared else None
    filled: dict[tuple, dict[str, Any]] = {}
    number = 0
    for path in doc.run_files():
        try:
            batches = pq.ParquetFile(path).iter_batches(columns=["body", "source"], batch_size=BATCH)
            for batch in batches:
                bodies, sources = batch.column(0).to_pylist(), batch.column(1).to_pylist()
                for body, source in zip(bodies, sources, strict=True):
                    number += 1
                    if body is None:
                        raise InputError(file, f"row {number}", "body", "is null: an outcome-only dataset holds "
                                         "counts, not runs", hint="answer from it in place with --ledger parquet:DIR")
                    text = f"{body[:-1]},\"source\":{source}}}" if source is not None else body
                    line = text.encode()
                    run = fast(line, number) if fast is not None else None
                    yield run or _one(number, _parsed(line, file, number), file, identity, filled, prepared)
        except InputError:
            raise
        except (OSError, ValueError) as exc:   # pyarrow's ArrowInvalid is a ValueError
            raise InputError(str(path), None, None, f"cannot be read as Parquet ({str(exc).splitlines()[0]})",
                             hint="write the dataset again with: fluke export --format parquet -o DIR") from None


def _parsed(line: bytes, file: str, number: int) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise InputError(file, f"row {number}", "body", f"is not JSON ({exc.msg})") from None


READER = Reader("parquet", "a fluke Parquet dataset (a folder fluke export --format parquet wrote)", sniff=sniff,
                read=read, takes="document", prepared=True)
