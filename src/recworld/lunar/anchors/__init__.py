"""Real anchors: who the synthetic users are modelled on, and what they really did.

* :mod:`~recworld.lunar.anchors.user`: :class:`AnchorUser` (a demographic record and
  the real records in time order, day-only ones marked), the pseudonyms synthesis runs on;
* :mod:`~recworld.lunar.anchors.files`: the user's own CSV/JSONL logs (``docs/lunar.md``);
* :mod:`~recworld.lunar.anchors.datasets`: any RecWorld dataset's users;
* :mod:`~recworld.lunar.anchors.domains`: source category -> LUNAR domain and behaviour
  type (``domains.json``, ``--domain-map``);
* :mod:`~recworld.lunar.anchors.sources`: ``--anchors A,B,...`` merged by user id,
  ``lunar-demo`` (the shipped multi-domain fixture).

Anchors guide synthesis and are never written to the synthetic dataset.
"""

from recworld.lunar.anchors.datasets import dataset_users
from recworld.lunar.anchors.domains import DomainMap, load_domain_map
from recworld.lunar.anchors.files import is_file_source, load_anchor_files
from recworld.lunar.anchors.sources import DEMO, demo_path, load_anchors, merge
from recworld.lunar.anchors.user import AnchorUser, pseudonymised, with_default_zone

__all__ = [
    "DEMO",
    "AnchorUser",
    "DomainMap",
    "dataset_users",
    "demo_path",
    "is_file_source",
    "load_anchor_files",
    "load_anchors",
    "load_domain_map",
    "merge",
    "pseudonymised",
    "with_default_zone",
]
