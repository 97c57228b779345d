"""Test-suite wide setup: the `pytester` fixture for the integration tests, and hypothesis settings
that do not depend on how busy the machine is."""

import io
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

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


@pytest.fixture(autouse=True)
def slow_if_it_starts_a_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A test that starts a process (``subprocess``, the reader child, xdist's workers through
    execnet) must carry the ``slow`` mark: ``-m "not slow"`` is the inner loop, and stays fast only
    if no unmarked test starts one."""
    if request.node.get_closest_marker("slow") is not None:
        yield
        return
    started: list[Any] = []
    real = subprocess.Popen.__init__

    def init(self: subprocess.Popen[Any], args: Any, *more: Any, **options: Any) -> None:
        started.append(args)
        real(self, args, *more, **options)

    monkeypatch.setattr(subprocess.Popen, "__init__", init)
    yield
    if started:
        pytest.fail(f"starts a process without the slow mark: {started[0]!r:.200}", pytrace=False)


@pytest.fixture(scope="session")
def child_here() -> Callable[[Any], Any]:
    """``child_here(request)``: the reader child's answer for a side, its program (``parallel.main``)
    run in this process and its answer read as the parent reads a child's; raises the input error
    it reports. What only a real process adds (its start, its imports, a crash) is shown by
    the `slow` tests that start one."""
    import marshal
    import sys
    from types import SimpleNamespace

    from pytest_rollout_parity.core.reading import parallel

    def run(request: Any) -> Any:
        answer = io.BytesIO()
        saved = sys.stdin, sys.stdout
        sys.stdin = SimpleNamespace(buffer=io.BytesIO(marshal.dumps(request.plain())))  # type: ignore[assignment]
        sys.stdout = SimpleNamespace(buffer=answer)  # type: ignore[assignment]
        try:
            assert parallel.main() == 0
        finally:
            sys.stdin, sys.stdout = saved
        answer.seek(0)
        return parallel.read_answer(answer)

    return run
