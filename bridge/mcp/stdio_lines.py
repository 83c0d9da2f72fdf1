"""Splitting stdin's bytes into JSON-RPC lines for :mod:`.stdio`, as the ``mcp``
package's stdio transport reads them (universal newlines), with a limit on a line's
length that the package does not have. No I/O.
"""

from __future__ import annotations

import re

import mcp_types as types

MAX_LINE_BYTES = 64 * 1024 * 1024
"""64 MiB, the largest line read as a message: the receive limit of the project's own
clients (docs/bridge.md); the bridge itself takes frames up to 32 MiB, so no request that
needs the bridge can be larger."""

_HEAD_BYTES = 512
"""Bytes kept of each end of a line over the limit, to find its request id."""

_ID = r'(-?\d+|"(?:[^"\\]|\\.)*")'
_ID_AT_START = re.compile(
    rb'\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,)*\s*"id"\s*:\s*' + _ID.encode())
"""``{"jsonrpc": "2.0", "id": 5, ...``: members before ``id`` that hold plain strings only,
so the ``id`` cannot be inside ``params``."""
_ID_AT_END = re.compile(rb',\s*"id"\s*:\s*' + _ID.encode() + rb'\s*\}\s*$')
"""``..., "id": 5}``: the last member of the outer object (the TypeScript SDK writes id
last)."""


class LineTooLong(Exception):
    """A stdin line longer than :data:`MAX_LINE_BYTES`, skipped unread.

    Attributes:
        size: bytes of the line (without its end), as far as it was read.
        limit: the limit, bytes.
        request_id: the JSON-RPC id found at the line's start or end, else None.
    """

    def __init__(self, size: int, limit: int, request_id: types.RequestId | None) -> None:
        super().__init__(f"stdin line of {size} bytes is over the {limit}-byte limit")
        self.size = size
        self.limit = limit
        self.request_id = request_id


def _request_id(head: bytes, tail: bytes) -> types.RequestId | None:
    match = _ID_AT_START.match(head) or _ID_AT_END.search(tail)
    if match is None:
        return None
    raw = match.group(1)
    if raw.startswith(b'"'):
        try:
            value = types.jsonrpc_message_adapter.validate_json(
                b'{"jsonrpc":"2.0","id":' + raw + b',"method":"x"}', by_name=False)
        except ValueError:
            return None
        return value.id  # type: ignore[union-attr]
    return int(raw)


class _LongLine:
    """The ends and size of a line over the limit, read past without keeping it."""

    def __init__(self, start: bytes) -> None:
        self.head = start[:_HEAD_BYTES]
        self.tail = start[-_HEAD_BYTES:]
        self.size = len(start)

    def add(self, piece: bytes) -> None:
        self.size += len(piece)
        self.tail = (self.tail + piece[-_HEAD_BYTES:])[-_HEAD_BYTES:]

    def error(self, limit: int) -> LineTooLong:
        return LineTooLong(self.size, limit, _request_id(self.head, self.tail))


class LineSplitter:
    """Splits stdin's bytes into lines as the package's universal-newlines reading does:
    a line ends at ``\n``, ``\r\n`` or a lone ``\r`` (JSON text holds a raw ``\r``
    only between tokens, never in a string). No I/O.

    Args:
        limit: the longest line, bytes without its end; a longer one comes out as
            :class:`LineTooLong` once its end is read, and is never held in memory whole.
    """

    def __init__(self, limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self._partial = bytearray()  # the start of the line being read
        self._long: _LongLine | None = None  # or: the line being read is over the limit
        self._after_cr = False  # the last line ended with \r: a \n next belongs to it

    def feed(self, data: bytes) -> list[bytes | LineTooLong]:
        """The lines that ``data`` completes, in order, without their ends."""
        if self._after_cr:
            self._after_cr = False
            if data.startswith(b"\n"):
                data = data[1:]
        out: list[bytes | LineTooLong] = []
        pos, size = 0, len(data)
        has_cr = b"\r" in data
        while pos < size:
            end = data.find(b"\n", pos)
            if has_cr:
                cr = data.find(b"\r", pos, size if end == -1 else end)
                end = end if cr == -1 else cr
            if end == -1:
                self._add(data[pos:])
                break
            if self._partial or self._long:
                self._add(data[pos:end])
                out.append(self._take())
            elif end - pos > self.limit:
                out.append(_LongLine(data[pos:end]).error(self.limit))
            else:
                out.append(data[pos:end])
            pos = end + 1
            if data[end] == 0x0D:  # \r: and \n right after it is the same line end
                if pos == size:
                    self._after_cr = True
                elif data[pos] == 0x0A:
                    pos += 1
        return out

    def end(self) -> list[bytes | LineTooLong]:
        """At EOF: the last line, when it has no line end."""
        return [self._take()] if self._partial or self._long else []

    def _add(self, piece: bytes) -> None:
        if self._long is not None:
            self._long.add(piece)
            return
        self._partial += piece
        if len(self._partial) > self.limit:
            self._long = _LongLine(bytes(self._partial))
            self._partial = bytearray()

    def _take(self) -> bytes | LineTooLong:
        if self._long is not None:
            long, self._long = self._long, None
            return long.error(self.limit)
        line = bytes(self._partial)
        self._partial.clear()
        return line
