"""The test server and the bot running in-process against it, under one name (:mod:`devtools.lila`)."""

from devtools.lila import *  # noqa: F401,F403
from devtools.lila import __all__  # noqa: F401
