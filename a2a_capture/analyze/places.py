"""A set of exchanges by their place in a session, a byte each.

The summary counts the exchanges that had a wasted (or a fragile) finding, each once: a file may
number two blocks alike (the reader accepts a repeated `### N`), so places must be told apart,
not just counted. A set of (file, label) tuples holds ~150 bytes per exchange, and a session
where nearly every call is wasted would grow with its file; this holds one byte per exchange
number (a bit would hold it in an eighth of that, at the cost of a bit's arithmetic for every
wasted call), in blocks of 4,096 numbers per file (webhooks apart), so memory stays flat.
"""

from __future__ import annotations

#: numbers per block (a power of two)
_BLOCK_BITS = 12
_BLOCK = 1 << _BLOCK_BITS
_LOW = _BLOCK - 1


class Places:
    """Exchanges by (file, webhook or not, number); ``count``: how many were added."""

    __slots__ = ("_block", "_file", "_files", "_start", "_webhook")

    def __init__(self) -> None:
        #: each file's blocks by key: the block's number twice, plus one for webhooks' (an int: no key tuple to
        #: make, hash and compare for each place); a block holds 1 for each number added, 0 for the others
        self._files: dict[str, dict[int, bytearray]] = {}
        #: the block added to last, and the place of its first number: a session's calls come in order, so the
        #: next is most often in it, found by a subtraction and two comparisons (the file is held, so ``is``
        #: cannot meet another in its place)
        self._file: str | None = None
        self._webhook, self._start, self._block = False, 0, bytearray(0)

    def add(self, file: str, webhook: bool, number: int) -> bool:
        """Add a place; False when it was already there."""
        offset = number - self._start
        if 0 <= offset < _BLOCK and file is self._file and webhook is self._webhook:
            block = self._block
        else:
            key = (number >> _BLOCK_BITS) * 2 + webhook
            try:  # the file's and the block's dicts indexed, without a method's call: a block is new once in 4,096
                block = self._files[file][key]
            except KeyError:
                block = self._files.setdefault(file, {}).setdefault(key, bytearray(_BLOCK))
            self._file, self._webhook, self._start, self._block = file, webhook, number & ~_LOW, block
            offset = number & _LOW
        if block[offset]:
            return False
        block[offset] = 1
        return True

    def __contains__(self, place: tuple[str, bool, int]) -> bool:
        file, webhook, number = place
        block = self._files.get(file, {}).get((number >> _BLOCK_BITS) * 2 + webhook)
        return block is not None and block[number & _LOW] == 1

    @property
    def count(self) -> int:
        """How many places were added."""
        return sum(block.count(1) for blocks in self._files.values() for block in blocks.values())

    def blocks(self) -> int:
        """How many blocks of numbers are held (a block is 4 KB)."""
        return sum(map(len, self._files.values()))

    def count_outside(self, other: Places) -> int:
        """How many of these places ``other`` does not hold."""
        total = 0
        for file, blocks in self._files.items():
            theirs = other._files.get(file, {})
            for key, block in blocks.items():
                mine = int.from_bytes(block, "little")  # a bit set for each place: its byte's lowest
                if key in theirs:
                    mine &= ~int.from_bytes(theirs[key], "little")
                total += mine.bit_count()
        return total
