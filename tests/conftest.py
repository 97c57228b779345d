"""Test-suite wide setup: the `pytester` fixture for the integration tests, and hypothesis settings
that do not depend on how busy the machine is."""

import importlib.util
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


class _Exited:
    """A reader child that has already exited 0: its program ran in this process (:func:`child_here`)."""

    def poll(self) -> int:
        return 0

    def wait(self) -> int:
        return 0


@pytest.fixture(scope="session")
def child_here() -> Callable[[Any], Any]:
    """``child_here(request)``: the reader child's answer for a side, its program (``child.main``)
    run in this process and its stream replayed as the parent replays a child's; raises the input
    error it streams. What only a real process adds (its start, its imports, a crash) is shown by
    the `slow` tests that start one."""
    import marshal
    import sys
    import tempfile
    from types import SimpleNamespace

    from pytest_rollout_parity.core.reading import child, parallel

    def run(request: Any) -> Any:
        with tempfile.TemporaryFile() as stream:
            saved = sys.stdin, sys.stdout
            sys.stdin = SimpleNamespace(buffer=io.BytesIO(marshal.dumps(request.plain())))  # type: ignore[assignment]
            sys.stdout = SimpleNamespace(buffer=stream)  # type: ignore[assignment]
            try:
                assert child.main() == 0
            finally:
                sys.stdin, sys.stdout = saved
            return parallel._Child(_Exited(), stream).side(request)  # type: ignore[arg-type]

    return run
