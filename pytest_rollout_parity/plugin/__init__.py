"""The pytest layer, a thin shell over :mod:`pytest_rollout_parity.core`: only ``entry`` (the
``pytest11`` entry point) is imported in every run, the rest when a run asks for the gate."""
