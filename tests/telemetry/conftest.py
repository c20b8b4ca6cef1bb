from collections.abc import Iterator

import pytest

from tests.telemetry.receiver import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    running.start()
    yield running
    running.stop()
