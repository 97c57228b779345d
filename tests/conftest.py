"""Test-suite wide setup: the `pytester` fixture for the integration tests, and hypothesis settings
that do not depend on how busy the machine is."""

import importlib.util

import pytest

pytest_plugins = ["pytester"]

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # pragma: no cover - only tests/property needs hypothesis
    pass
else:
    # Generation speed is no property of the code under test: on a loaded machine the too_slow
    # health check fails a correct test. Deadlines are off for the same reason.
    settings.register_profile("parity", deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("parity")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test parametrized over the readers (a ``parser`` or ``reader`` parameter naming one, as
    ``PARITY_PARSER`` does) skips its msgspec case where the `fast` extra is not installed:
    asked for msgspec without it, the gate reads with pydantic-core, which the test already covers."""
    if importlib.util.find_spec("msgspec") is not None:
        return
    skip = pytest.mark.skip(reason="needs the `fast` extra (msgspec)")
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "msgspec" in (params.get("parser"), params.get("reader")):
            item.add_marker(skip)
