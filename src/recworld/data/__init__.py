"""Datasets: the canonical form, one loader per published source format, and fetching."""

from recworld.data.dataset import ITEM_FIELDS, USER_FIELDS, Dataset, Domain, FieldKind

__all__ = ["ITEM_FIELDS", "USER_FIELDS", "Dataset", "Domain", "FieldKind"]
