"""The time manager's tests: their log lines go to a list (structlog's capture), never to a stream another test
may have pointed structlog at and pytest closed since."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import structlog


@pytest.fixture(autouse=True)
def _captured_logs() -> Iterator[list[dict[str, Any]]]:
    with structlog.testing.capture_logs() as logs:
        yield logs
