"""Small random interaction matrices shared by the mining tests."""

from __future__ import annotations

import pytest

from helpers.mining import random_interactions
from recworld.mining import InteractionMatrix


@pytest.fixture(params=[0, 1, 2])
def small_matrix(request: pytest.FixtureRequest) -> InteractionMatrix:
    return InteractionMatrix.from_interactions(random_interactions(int(request.param)))
