"""Test-suite wide setup: the `pytester` fixture for the integration tests."""

pytest_plugins = ["pytester"]
