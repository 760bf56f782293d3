"""Why a server could not be reached, in words a user can act on. Wire only: imports requests and urllib3.

A failed connection reaches us as requests' ``ConnectionError`` or ``Timeout`` wrapping urllib3's errors,
which wrap the socket's (``socket.gaierror``, ``ConnectionRefusedError``, ``TimeoutError``, ``ssl.SSLError``).
:func:`cause` walks that chain and names the first cause a user can act on; :func:`describe` says it with
the server and what to check, e.g. "the name lichess.org does not resolve (DNS): check the url and that this
machine is online".
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from enum import Enum
from urllib.parse import urlsplit

import requests
from urllib3.exceptions import ConnectTimeoutError, NameResolutionError, NewConnectionError, ReadTimeoutError

__all__ = ["Cause", "cause", "describe"]


class Cause(Enum):
    """Why a connection failed."""

    NAME = "name resolution"
    REFUSED = "connection refused"
    TIMEOUT = "timeout"
    TLS = "TLS handshake"
    OTHER = "connection failed"


def _chain(err: BaseException) -> Iterator[BaseException]:
    """``err`` and every exception it wraps: urllib3's ``reason``, exceptions among ``args``, the
    ``__cause__`` and ``__context__`` of each (each once)."""
    seen: set[int] = set()
    stack: list[BaseException] = [err]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        reason = getattr(e, "reason", None)
        inner = [a for a in e.args if isinstance(a, BaseException)]
        inner += [x for x in (reason, e.__cause__, e.__context__) if isinstance(x, BaseException)]
        stack.extend(reversed(inner))


def _is_timeout(e: BaseException) -> bool:
    # urllib3's NewConnectionError (refused, unresolvable) subclasses its ConnectTimeoutError: not a timeout
    return (isinstance(e, requests.Timeout | TimeoutError | ReadTimeoutError)
            or (isinstance(e, ConnectTimeoutError) and not isinstance(e, NewConnectionError)))


def cause(err: BaseException) -> tuple[Cause, BaseException]:
    """The cause of a failed connection and the exception that shows it (TLS, then name resolution, then
    refused, then timeout; else :attr:`Cause.OTHER` with ``err`` itself)."""
    chain = list(_chain(err))
    tests = (
        (Cause.TLS, lambda e: isinstance(e, ssl.SSLError | requests.exceptions.SSLError)),
        (Cause.NAME, lambda e: isinstance(e, socket.gaierror | NameResolutionError)),
        (Cause.REFUSED, lambda e: isinstance(e, ConnectionRefusedError)),
        (Cause.TIMEOUT, _is_timeout),
    )
    for kind, test in tests:
        for e in chain:
            if test(e):
                return kind, e
    return Cause.OTHER, err


def _host_port(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    host = parts.hostname or "?"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return host, f"{host}:{port}"


def describe(err: BaseException, url: str, timeout: float | None = None) -> str:
    """One line: why ``url`` could not be reached (``err``: the requests error) and what to check.
    ``timeout``: the seconds waited, named when the cause is a timeout."""
    kind, shown = cause(err)
    host, where = _host_port(url)
    if kind is Cause.NAME:
        return f"the name {host} does not resolve (DNS): check the url and that this machine is online"
    if kind is Cause.REFUSED:
        return f"{where} refused the connection: check the url's port and that the server runs"
    if kind is Cause.TIMEOUT:
        within = f" within {round(timeout, 1):g} s" if timeout is not None else " in time"
        return f"{where} did not answer{within}: check the network, a firewall or a proxy"
    if kind is Cause.TLS:
        detail = getattr(shown, "reason", None) or str(shown).split(" (_ssl")[0]
        return (f"the TLS handshake with {where} failed ({detail}): check the url's scheme (http:// for a "
                "server without TLS), the system's CA certificates and clock")
    text = str(shown).split("(Caused by")[-1].strip(" ()") or type(shown).__name__
    return f"{type(shown).__name__}: {text[:200]}: check the network"
