"""What users interact with in a dataset: movies, products or music. A leaf module.

The domain is vocabulary shared by the data layer (every :class:`~recworld.data.Dataset`
has one) and by the measure catalogue (each measure applies to some domains).
It lives below both so that reading the catalogue, as scoring and the report
do, never imports a data loader.
"""

from __future__ import annotations

from enum import StrEnum


class Domain(StrEnum):
    MOVIE = "movie"
    PRODUCT = "product"
    MUSIC = "music"
