"""Lanes by cost (tests/conftest.py): a fixture that takes seconds to make marks every
test that requests it `slow`."""


def slow_fixture(fn):
    """Mark a fixture function (under @pytest.fixture) as slow to make."""
    fn.slow = True
    return fn
