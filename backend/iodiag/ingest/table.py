"""A module's records as numpy columns, and per-key reductions over them.

The analysis works on these instead of pandas DataFrames: importing pandas alone costs about 0.4 s, more
than reading and analysing a typical log, and every check needs only column arithmetic, row selection and
group-by-key sums. ``Table.to_pandas`` builds a DataFrame for callers that want one (batch exports,
notebooks); nothing on the analysis path calls it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


class Table:
    """Rows of one module (one per record, or per Lustre component), as equal-length numpy columns.

    Columns are shared between tables made from one another (``where``/``take`` copy rows, not the
    originals): treat every column as read-only.
    """

    __slots__ = ("_cols", "_n")

    def __init__(self, columns: Mapping[str, np.ndarray] | None = None, length: int | None = None) -> None:
        cols = dict(columns or {})
        n = length if length is not None else (len(next(iter(cols.values()))) if cols else 0)
        for name, col in cols.items():
            if len(col) != n:
                raise ValueError(f"column {name!r} has {len(col)} rows, the table {n}")
        self._cols = cols
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __contains__(self, name: object) -> bool:
        return name in self._cols

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self._cols[name]
        except KeyError:
            raise KeyError(f"no column {name!r}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._cols)

    def __repr__(self) -> str:
        return f"Table({self._n} rows, {len(self._cols)} columns)"

    @property
    def columns(self) -> list[str]:
        return list(self._cols)

    @property
    def empty(self) -> bool:
        return self._n == 0

    def get(self, name: str, default: np.ndarray | None = None) -> np.ndarray | None:
        return self._cols.get(name, default)

    def num(self, name: str) -> np.ndarray:
        """The column as float64, or zeros when the table lacks it (an older module version)."""
        col = self._cols.get(name)
        return np.zeros(self._n) if col is None else col.astype(float)

    def total(self, name: str | None) -> float:
        """Sum of a numeric column; 0 for a missing column or None."""
        if name is None or name not in self._cols or not self._n:
            return 0.0
        return float(self._cols[name].sum())

    def where(self, mask: np.ndarray) -> Table:
        """The rows where ``mask`` (a boolean array as long as the table) is true, in order."""
        return self.take(np.flatnonzero(mask))

    def take(self, rows: np.ndarray | Sequence[int]) -> Table:
        idx = np.asarray(rows, dtype=np.intp)
        return Table({k: v[idx] for k, v in self._cols.items()}, len(idx))

    def with_columns(self, **cols: np.ndarray) -> Table:
        return Table({**self._cols, **cols}, self._n)

    def isin(self, name: str, values: Any) -> np.ndarray:
        """Rows whose ``name`` is one of ``values`` (any iterable; record ids compare as uint64)."""
        col = self._cols[name]
        vals = np.fromiter((int(v) for v in values), dtype=col.dtype) if col.dtype.kind in "iu" else np.asarray(values)
        return np.isin(col, vals) if len(vals) else np.zeros(self._n, dtype=bool)

    def group_by(self, name: str) -> Groups:
        return Groups(self._cols[name])

    def to_pandas(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame({k: (list(v) if v.dtype == object else v) for k, v in self._cols.items()})


class Groups:
    """Rows grouped by a key column: reductions give one value per distinct key, keys sorted ascending.

    Sums of integer columns stay exact int64 (byte counts exceed a double's 53 bits of precision on big runs).
    """

    __slots__ = ("_order", "_starts", "inverse", "keys")

    def __init__(self, keys: np.ndarray) -> None:
        self.keys, inverse = np.unique(keys, return_inverse=True)
        self.inverse: np.ndarray = inverse.reshape(-1)
        self._order = np.argsort(self.inverse, kind="stable")
        sorted_groups = self.inverse[self._order]
        self._starts: np.ndarray = (
            np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]]) if len(keys) else np.zeros(0, np.intp)
        )

    def __len__(self) -> int:
        return len(self.keys)

    def _reduce(self, ufunc: np.ufunc, values: np.ndarray) -> np.ndarray:
        if not len(self.keys):
            return np.asarray(values)[:0]
        out: np.ndarray = ufunc.reduceat(np.asarray(values)[self._order], self._starts)
        return out

    def sum(self, values: np.ndarray) -> np.ndarray:
        v = np.asarray(values)
        if v.dtype == bool:
            v = v.astype(np.int64)
        return self._reduce(np.add, v)

    def max(self, values: np.ndarray) -> np.ndarray:
        return self._reduce(np.maximum, values)

    def min(self, values: np.ndarray) -> np.ndarray:
        return self._reduce(np.minimum, values)

    def any(self, mask: np.ndarray) -> np.ndarray:
        return self._reduce(np.logical_or, np.asarray(mask, dtype=bool))

    def count(self) -> np.ndarray:
        return np.bincount(self.inverse, minlength=len(self.keys))

    def mean(self, values: np.ndarray) -> np.ndarray:
        out: np.ndarray = self.sum(np.asarray(values, dtype=float)) / np.maximum(self.count(), 1)
        return out

    def nunique(self, values: np.ndarray) -> np.ndarray:
        """Distinct values per group."""
        if not len(self.keys):
            return np.zeros(0, dtype=np.int64)
        pairs = np.unique(np.stack([self.inverse, np.unique(values, return_inverse=True)[1].reshape(-1)]), axis=1)
        return np.bincount(pairs[0], minlength=len(self.keys))

    def argmax(self, values: np.ndarray) -> np.ndarray:
        """Per group, the row (index into the table) of its largest value; the first such row on ties."""
        return self._arg(values, self.max(values))

    def argmin(self, values: np.ndarray) -> np.ndarray:
        return self._arg(values, self.min(values))

    def _arg(self, values: np.ndarray, best: np.ndarray) -> np.ndarray:
        v = np.asarray(values)[self._order]
        hit = np.flatnonzero(v == best[self.inverse[self._order]])
        groups = self.inverse[self._order][hit]
        _, first = np.unique(groups, return_index=True)
        return np.asarray(self._order[hit[first]])

    def lookup(self, keys: np.ndarray, per_group: np.ndarray, fill: float | int = 0) -> np.ndarray:
        """``per_group`` values (one per key of these groups) for each of ``keys``; ``fill`` for unknown keys."""
        pos = np.searchsorted(self.keys, keys)
        pos = np.clip(pos, 0, max(len(self.keys) - 1, 0))
        found = (self.keys[pos] == keys) if len(self.keys) else np.zeros(len(keys), dtype=bool)
        out = np.full(len(keys), fill, dtype=np.result_type(per_group, type(fill)))
        out[found] = per_group[pos[found]]
        return out
