"""The listening socket of the HTTP endpoints: a bind that fails names what to change."""

from __future__ import annotations

import pytest

from fisk_ai.errors import FiskError
from fisk_ai.util.listening import listening_socket


def test_a_port_in_use_is_refused_naming_the_setting() -> None:
    taken = listening_socket("127.0.0.1", 0, address_setting="A", port_setting="the.port")
    try:
        port = taken.getsockname()[1]
        with pytest.raises(FiskError, match=rf"port {port}: .*; change the.port$"):
            listening_socket("127.0.0.1", port, address_setting="A", port_setting="the.port")
    finally:
        taken.close()


def test_an_address_that_does_not_resolve_is_refused_naming_the_setting() -> None:
    with pytest.raises(FiskError, match=r"change the.address$"):
        listening_socket("no such host.invalid", 0, address_setting="the.address", port_setting="P")
