"""dask.distributed as ``Any``: its functions carry no annotations, which strict mypy refuses to call.
Every batch module reaches Dask through here, so that is the one place typing is given up."""

from __future__ import annotations

import importlib
from typing import Any


def distributed() -> Any:
    return importlib.import_module("distributed")
