"""What crosses the knowledge layer's boundary: document metadata and retrieved passages."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, ConfigDict, Field


class DocMeta(BaseModel):
    """A knowledge document's front matter (validated; a bad document fails the build, loudly)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str
    layer: str  # e.g. POSIX, MPI-IO, HDF5, PnetCDF, STDIO, Lustre, GPFS, job, darshan, facility
    codes: tuple[str, ...] = ()  # finding codes this document explains
    recommendations: tuple[str, ...] = ()  # recommendation ids (analysis/recommendations.py) it explains
    facility: str | None = None  # NERSC, OLCF, ALCF, or None for general documents
    sources: tuple[str, ...] = ()  # public URLs the facts come from
    updated: date


class Passage(BaseModel):
    """One retrieved chunk of a document (a section under one heading)."""

    model_config = ConfigDict(frozen=True)

    doc_id: str
    chunk_id: str
    title: str
    heading: str
    text: str
    score: float = 0.0
    layer: str
    codes: tuple[str, ...] = ()
    facility: str | None = None
    sources: tuple[str, ...] = ()
    why: str = ""  # "mapped" (the finding's own document) or "retrieved"
