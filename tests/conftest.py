"""Test-suite wide setup: the `pytester` fixture for the integration tests, and hypothesis settings
that do not depend on how busy the machine is."""

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
