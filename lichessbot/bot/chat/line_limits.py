"""What lichess does with a bot's chat line, so that we never post one it drops or refuses.

* **Length**: at most 140 UTF-16 code units (lila's chat ``Line`` limit; an emoji outside the Basic
  Multilingual Plane counts 2): a longer line is a 400. :func:`fit` cuts a line to that.
* **Links**: a bot's line with a link is dropped silently, with HTTP 200 (lila
  modules/chat/src/main/ChatApi.scala ``makeLine``: ``hasLinks`` for bots; the link test is lila
  modules/common/src/main/RawHtml.scala ``hasLinks``). A link there is ``http://`` or ``https://``
  followed by a word character, or a bare domain of one to three labels ending in ``.com``, ``.org`` or
  ``.edu`` (so ``lichess.org`` alone is a link, an e-mail address is not). :func:`has_link` tells; the
  sender does not post such a line (nothing would reach the chat) and logs why.

Imports nothing of the project.
"""

from __future__ import annotations

import re

__all__ = ["MAX_UNITS", "fit", "has_link", "utf16_units"]

#: lila's limit on a chat line, in UTF-16 code units (a longer line is refused with a 400).
MAX_UNITS = 140

_LINK = re.compile(
    r"\bhttps?://\w"                                # a link with its scheme
    r"|(?<![\w/@.-])(?:\w{1,15}\.){1,3}(?:com|org|edu)\b(?![@.]\w)",  # a bare domain: lichess.org, a.b.edu
    re.IGNORECASE | re.ASCII)


def has_link(text: str) -> bool:
    """Whether lila reads ``text`` as holding a link (see the module docstring)."""
    return _LINK.search(text) is not None


def utf16_units(text: str) -> int:
    """The length of ``text`` as lila counts it: UTF-16 code units (a character above U+FFFF counts 2)."""
    return len(text.encode("utf-16-le")) // 2


def fit(text: str, units: int = MAX_UNITS) -> str:
    """``text`` with its whitespace collapsed, cut to ``units`` UTF-16 code units (ending with "…" when cut;
    never half a surrogate pair)."""
    text = " ".join(text.split())
    if utf16_units(text) <= units:
        return text
    out, used = [], 0
    for ch in text:
        n = 2 if ord(ch) > 0xFFFF else 1
        if used + n > units - 1:
            break
        out.append(ch)
        used += n
    return "".join(out) + "…"
