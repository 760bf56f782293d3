"""The test server and the bot running in-process against it, under one name (:mod:`tests.lila`)."""

from tests.lila import *  # noqa: F401,F403
from tests.lila import __all__  # noqa: F401
