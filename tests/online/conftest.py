"""Fixtures of the online sources' tests: the fake services, and OnlineMoves pointed at them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from lichessbot.config.online import OnlineMovesConfig
from lichessbot.online import OnlineMoves
from tests.online.services import FakeServices


@pytest.fixture
def services() -> Iterator[FakeServices]:
    with FakeServices() as s:
        yield s


@pytest.fixture
def make_online(services: FakeServices) -> Iterator[Callable[..., OnlineMoves]]:
    """``make_online({"lichess_opening_explorer": {"enabled": True}}, token=..., pacer=...)``: OnlineMoves with
    every source's ``url`` on the fake services (closed after the test)."""
    made: list[OnlineMoves] = []

    def make(sections: dict[str, Any], **kwargs: Any) -> OnlineMoves:
        data: dict[str, Any] = {k: dict(v) if isinstance(v, dict) else v for k, v in sections.items()}
        for key, url in (("lichess_opening_explorer", services.url), ("lichess_cloud_analysis", services.url),
                         ("chessdb_book", services.url + "/cdb.php")):
            data.setdefault(key, {}).setdefault("url", url)
        egtb = data.setdefault("online_egtb", {})
        egtb.setdefault("url", services.url + ("/cdb.php" if egtb.get("source") == "chessdb" else ""))
        online = OnlineMoves(OnlineMovesConfig.model_validate(data), **kwargs)
        made.append(online)
        return online

    yield make
    for online in made:
        online.close()
