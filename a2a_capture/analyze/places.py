"""A set of exchanges by their place in a session, a bit each.

The summary counts the exchanges that had a wasted (or a fragile) finding, each once: a file may
number two blocks alike (the reader accepts a repeated `### N`), so places must be told apart,
not just counted. A set of (file, label) tuples holds ~150 bytes per exchange, and a session
where nearly every call is wasted would grow with its file; this holds one bit per exchange
number, in blocks of 4,096 numbers per file (webhooks apart), so memory stays flat.
"""

from __future__ import annotations

#: numbers per block (a power of two) and the bytes that hold them
_BLOCK_BITS = 12
_BLOCK_BYTES = (1 << _BLOCK_BITS) // 8


class Places:
    """Exchanges by (file, webhook or not, number); ``count``: how many were added."""

    __slots__ = ("_blocks", "count")

    def __init__(self) -> None:
        self._blocks: dict[tuple[str, bool, int], bytearray] = {}
        self.count = 0

    def add(self, file: str, webhook: bool, number: int) -> bool:
        """Add a place; False when it was already there."""
        key = (file, webhook, number >> _BLOCK_BITS)
        block = self._blocks.get(key)
        if block is None:
            block = self._blocks[key] = bytearray(_BLOCK_BYTES)
        index, bit = (number >> 3) & (_BLOCK_BYTES - 1), 1 << (number & 7)
        if block[index] & bit:
            return False
        block[index] |= bit
        self.count += 1
        return True

    def __contains__(self, place: tuple[str, bool, int]) -> bool:
        file, webhook, number = place
        block = self._blocks.get((file, webhook, number >> _BLOCK_BITS))
        return block is not None and bool(block[(number >> 3) & (_BLOCK_BYTES - 1)] & (1 << (number & 7)))

    def count_outside(self, other: Places) -> int:
        """How many of these places ``other`` does not hold."""
        total = 0
        for key, block in self._blocks.items():
            mine = int.from_bytes(block, "little")
            theirs = other._blocks.get(key)
            if theirs is not None:
                mine &= ~int.from_bytes(theirs, "little")
            total += mine.bit_count()
        return total
