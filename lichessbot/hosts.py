"""Host names as this machine's HTTP servers and its config read them: whether a name is this machine only, the
``Host`` header parsed, and which names a server bound to an address answers to. One place for the status page
(:mod:`lichessbot.status.guard`), the embedded lichess (:mod:`lichessbot.local.http`) and the ``url`` check of
the config: a DNS-rebinding page reaches a server under a name of the attacker's, which none of them admits."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

__all__ = ["WILDCARDS", "host_admitted", "host_names", "is_loopback", "split_host"]

#: Bind addresses that mean "every address": they name no host a browser could ask for.
WILDCARDS = frozenset({"", "0.0.0.0", "::", "*"})
_NAME = re.compile(r"[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?")


def split_host(value: str) -> tuple[str, int | None] | None:
    """``(name, port)`` of a ``Host`` header value (RFC 9110 §7.2: ``host [":" port]``, IPv6 in brackets): the
    name lowercased without brackets or a trailing dot, the port None when absent; None when malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        name, sep, rest = value[1:].partition("]")
        try:
            ipaddress.IPv6Address(name)
        except ValueError:
            return None
        if not sep or (rest and not rest.startswith(":")):
            return None
        port = rest[1:] if rest else None
    else:
        name, sep, port_text = value.partition(":")
        port = port_text if sep else None
        name = name[:-1] if name.endswith(".") else name
        if not _NAME.fullmatch(name):
            return None
    if port is not None and not (port.isdigit() and len(port) <= 5 and int(port) <= 65535):
        return None
    return name, int(port) if port is not None else None


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name without port or brackets) is this machine only: ``localhost`` or a name under it
    (RFC 6761 §6.3: they resolve to loopback addresses), or a loopback address (127.0.0.0/8, RFC 1122
    §3.2.1.3; ::1, RFC 4291 §2.5.3)."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_names(bound: str, allowed: Iterable[str] = ()) -> frozenset[str]:
    """The names a request's ``Host`` may carry besides the loopback ones: the bind address ``bound`` unless it is
    a wildcard (:data:`WILDCARDS`), and ``allowed`` (e.g. a reverse proxy's names); lowercase, no port."""
    names = {h.lower().rstrip(".") for h in allowed}
    if bound not in WILDCARDS:
        bare = bound.strip("[]")
        parsed = split_host(f"[{bare}]" if ":" in bare else bare)
        if parsed is not None:
            names.add(parsed[0])
    return frozenset(names)


def host_admitted(header: str | None, names: frozenset[str]) -> bool:
    """Whether a ``Host`` header names this server: well formed (:func:`split_host`) and loopback
    (:func:`is_loopback`) or one of ``names`` (:func:`host_names`)."""
    parsed = split_host(header or "")
    return parsed is not None and (is_loopback(parsed[0]) or parsed[0] in names)
