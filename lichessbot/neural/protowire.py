"""A minimal protobuf wire-format reader and writer (no generated code, no schema).

Enough for lc0 weight files (lc0 proto/net.proto): the reader decodes one message level at a time into
``{field number: [values]}``; the writer builds messages for tests and tools. Wire format as documented
at https://protobuf.dev/programming-guides/encoding/ (varint = 0, fixed64 = 1, length-delimited = 2,
fixed32 = 5; groups are not supported).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

#: One decoded message level: field number -> its values in file order (varints as ``int``, the other wire
#: types as ``memoryview`` slices of the data).
Fields = dict[int, list[int | memoryview]]


class WireError(ValueError):
    """Malformed protobuf data (truncated field, bad wire type, overlong varint)."""


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise WireError("varint runs past the end of the data")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise WireError("varint longer than 10 bytes")


def decode(buf: bytes | memoryview) -> Fields:
    """One message level: field number -> values in file order.

    Varints become ``int``; fixed32, fixed64 and length-delimited values become ``memoryview`` slices
    of ``buf`` (no copy; decode embedded messages by calling :func:`decode` on them). Raises WireError.
    """
    buf = memoryview(buf)
    out: Fields = {}
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        num, wire = key >> 3, key & 7
        if num == 0:
            raise WireError("field number 0")
        val: int | memoryview
        if wire == 0:
            val, pos = _varint(buf, pos)
        elif wire in (1, 2, 5):
            if wire == 2:
                n, pos = _varint(buf, pos)
            else:
                n = 8 if wire == 1 else 4
            if pos + n > end:
                raise WireError(f"field {num} needs {n} bytes, only {end - pos} left (truncated?)")
            val = buf[pos : pos + n]
            pos += n
        else:
            raise WireError(f"unsupported wire type {wire} in field {num}")
        out.setdefault(num, []).append(val)
    return out


def _enc_varint(v: int) -> bytes:
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def varint_field(num: int, value: int) -> bytes:
    """A varint field (ints, enums, bools)."""
    return _enc_varint(num << 3) + _enc_varint(value)


def bytes_field(num: int, value: bytes) -> bytes:
    """A length-delimited field (bytes, strings, embedded messages)."""
    return _enc_varint(num << 3 | 2) + _enc_varint(len(value)) + value


def float_field(num: int, value: float) -> bytes:
    """A ``float`` (fixed32) field."""
    return _enc_varint(num << 3 | 5) + struct.pack("<f", value)


def fixed32_field(num: int, value: int) -> bytes:
    """A ``fixed32`` field."""
    return _enc_varint(num << 3 | 5) + struct.pack("<I", value)


def message(parts: Iterable[bytes]) -> bytes:
    """Concatenate encoded fields into one message."""
    return b"".join(parts)
