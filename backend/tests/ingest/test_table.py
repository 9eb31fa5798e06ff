"""Table and Groups: the numpy forms of the DataFrame operations the checks used, held to pandas' results."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iodiag.ingest.table import Groups, Table

keys = st.lists(st.integers(min_value=0, max_value=6), min_size=0, max_size=40)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), k=keys)
def test_group_reductions_match_pandas_groupby(data: st.DataObject, k: list[int]) -> None:
    n = len(k)
    ints = np.array(data.draw(st.lists(st.integers(-50, 50), min_size=n, max_size=n)), dtype=np.int64)
    floats = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=n, max_size=n)))
    ids = np.array(k, dtype=np.uint64)
    g = Groups(ids)
    frame = pd.DataFrame({"id": ids, "i": ints, "f": floats})
    by = frame.groupby("id")
    assert g.keys.tolist() == sorted(set(k))
    assert g.sum(ints).tolist() == by["i"].sum().tolist()
    assert g.sum(ints).dtype == np.int64  # integer sums stay exact
    assert g.max(ints).tolist() == by["i"].max().tolist()
    assert g.min(floats).tolist() == by["f"].min().tolist()
    assert g.count().tolist() == by.size().tolist()
    assert g.nunique(floats).tolist() == by["f"].nunique().tolist()
    assert g.any(ints > 0).tolist() == by["i"].apply(lambda s: bool((s > 0).any())).tolist()
    # idxmax/idxmin: the first row holding the extreme, as pandas picks it.
    assert g.argmax(floats).tolist() == by["f"].idxmax().tolist()
    assert g.argmin(ints).tolist() == by["i"].idxmin().tolist()


def test_integer_sums_stay_exact_above_a_doubles_precision() -> None:
    big = np.array([2**53, 1, 1], dtype=np.int64)
    assert Groups(np.array([7, 7, 7], dtype=np.uint64)).sum(big).tolist() == [2**53 + 2]
    assert float(2**53) + 1.0 + 1.0 == float(2**53)  # what a float sum would have given


def test_lookup_fills_keys_the_groups_do_not_have() -> None:
    g = Groups(np.array([5, 3, 5], dtype=np.uint64))
    per = g.sum(np.array([1.0, 2.0, 4.0]))
    assert g.lookup(np.array([5, 4, 3, 9], dtype=np.uint64), per).tolist() == [5.0, 0.0, 2.0, 0.0]
    empty = Groups(np.zeros(0, dtype=np.uint64))
    assert empty.lookup(np.array([1], dtype=np.uint64), empty.sum(np.zeros(0)), fill=-1).tolist() == [-1]


def test_table_rows_columns_and_errors() -> None:
    t = Table({"id": np.array([1, 2, 3], dtype=np.uint64), "x": np.array([1.0, 0.0, 3.0])})
    assert len(t) == 3 and t.columns == ["id", "x"] and not t.empty
    picked = t.where(t["x"] > 0)
    assert picked["id"].tolist() == [1, 3] and len(picked) == 2
    assert t.take([2, 0])["x"].tolist() == [3.0, 1.0]
    assert t.isin("id", {3, 1}).tolist() == [True, False, True]
    assert t.isin("id", set()).tolist() == [False, False, False]
    assert t.total("x") == 4.0 and t.total("missing") == 0.0 and t.total(None) == 0.0
    assert t.num("missing").tolist() == [0.0, 0.0, 0.0]
    assert t.with_columns(y=np.arange(3))["y"].tolist() == [0, 1, 2]
    assert t.to_pandas()["x"].tolist() == [1.0, 0.0, 3.0]
    with pytest.raises(KeyError, match="no column 'nope'"):
        t["nope"]
    with pytest.raises(ValueError, match="has 2 rows, the table 3"):
        Table({"a": np.zeros(3), "b": np.zeros(2)})
    assert Table().empty and len(Table()) == 0
