"""The repository's own suite: `testpaths` makes plain `pytest` run it."""

import pytest


def test_own_code():
    assert sum([1, 2]) == 3


@pytest.mark.slow
def test_own_slow_code():
    assert sorted([2, 1]) == [1, 2]
