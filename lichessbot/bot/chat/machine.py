"""What the greetings' ``{engine}``, ``{cpu}`` and ``{ram}`` say (BotLi's message variables, its chatter.py):
the engine and network, the processor and the memory of the machine the bot runs on. Read once."""

from __future__ import annotations

import functools
import os
import platform
from pathlib import Path

from lichessbot import __version__

__all__ = ["cpu_text", "engine_text", "ram_text"]


def engine_text(network: str) -> str:
    """``lichessbot 1.2.3 (network tiny)``."""
    return f"lichessbot {__version__} (network {network})"


@functools.cache
def cpu_text() -> str:
    """The processor's model name (``/proc/cpuinfo``'s ``model name``, else :func:`platform.processor`, else the
    machine type) and its logical cores, e.g. ``AMD EPYC 7763 64-Core Processor, 16 threads``."""
    name = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name") and ":" in line:
                name = line.split(":", 1)[1].replace("(R)", "").replace("(TM)", "").strip()
                break
    except OSError:
        pass
    name = " ".join((name or platform.processor() or platform.machine() or "unknown CPU").split())
    threads = os.cpu_count()
    return f"{name}, {threads} threads" if threads else name


@functools.cache
def ram_text() -> str:
    """The machine's memory in GiB (``sysconf``: pages x page size), e.g. ``31.3 GiB``; ``unknown RAM`` where the
    OS does not say."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "unknown RAM"
    return f"{total / 2**30:.1f} GiB"
