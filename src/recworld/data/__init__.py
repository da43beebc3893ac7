"""Datasets: the canonical form, one loader per published source format, and fetching."""

from recworld.data.dataset import ITEM_FIELDS, USER_FIELDS, Dataset, Domain, FieldKind
from recworld.data.fetch import FETCHABLE, fetch, resolve_dataset
from recworld.data.formats import FORMATS, SourceFormat, detect_format, get_format
from recworld.data.metadata import apply_metadata
from recworld.data.sources import load_source

__all__ = [
    "FETCHABLE",
    "FORMATS",
    "ITEM_FIELDS",
    "USER_FIELDS",
    "Dataset",
    "Domain",
    "FieldKind",
    "SourceFormat",
    "apply_metadata",
    "detect_format",
    "fetch",
    "get_format",
    "load_source",
    "resolve_dataset",
]
