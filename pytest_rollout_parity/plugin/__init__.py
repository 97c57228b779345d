"""The pytest layer: a thin shell over :mod:`pytest_rollout_parity.core`.

``entry`` is the ``pytest11`` entry point and imports only pytest; everything else here is
imported when a run gives a ``--parity-*`` option or ini key.
"""
