"""What the view holds of a session: one small row per exchange, its findings, and where its block is.

Bodies are not kept: the detail of an exchange is read again from its file when asked for
(``detail.py``), so a view of 100,000 exchanges holds rows, not documents. Every change is
numbered (``version``) and told to the pages that watch, so a page that reconnects asks for
what it missed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True, slots=True)
class FindingRow:
    """A finding as the page shows it: already masked and escaped for a terminal, never for HTML
    (the page sets text, never markup)."""

    rule: str
    severity: str
    outcome: str  # wasted, fragile or advice
    title: str
    message: str
    fix: str
    spec: str
    related: tuple[str, ...] = ()  # labels of the exchanges that had already answered it
    cost: float | None = None


@dataclass(slots=True)
class Row:
    """One exchange in the list. ``findings`` grow as the analysis reaches them (a finding can come
    after its exchange is shown, in a live session)."""

    index: int  # its place in the view: the key the page asks by
    file: int  # into ViewState.files
    label: str  # "6" or "webhook 2"
    number: int
    line: int | None
    title: str
    webhook: bool
    started: float | None  # seconds since the epoch
    duration: float | None
    agent: str  # the card's name where one was held, else the origin
    origin: str
    operation: str
    method: str
    target: str
    task: str
    context: str
    status: int | None
    outcome: str  # the error's name, the last task state, "card of X", or the status
    failed: bool
    worked: bool  # Call.ok: only a call that worked counts among those that worked by leniency
    frames: int
    card: int | None = None  # into ViewState.cards: the card the client held when it made the call
    #: (task, state, seconds since the epoch or None) as the exchange showed them: the task timelines' marks
    states: tuple[tuple[str, str, float | None], ...] = ()
    findings: list[FindingRow] = field(default_factory=list)

    def as_json(self) -> dict:
        data = asdict(self)
        data["findings"] = [asdict(finding) for finding in self.findings]
        return data


@dataclass(frozen=True, slots=True)
class HeldCardRow:
    """A card the client held, as fetched by one exchange: shown beside the calls made under it."""

    name: str
    origin: str
    fetched_by: str  # the label of the exchange that fetched it
    fetched_in: int  # into ViewState.files
    streaming: bool
    push_notifications: bool
    extended_card: bool
    stated: tuple[tuple[str, str], ...]
    interfaces: tuple[tuple[str, str, str], ...]  # (binding, url, protocol version)


class ViewState:
    """Rows, cards and files of the sessions a view shows; safe to feed from one thread while the
    server reads from another."""

    def __init__(self, files: list[str]) -> None:
        self.files = list(files)
        self.rows: list[Row] = []
        self.cards: list[HeldCardRow] = []
        self._card_index: dict[tuple, int] = {}
        self._by_label: dict[tuple[int, str], int] = {}
        #: byte offset of each row's block in its file (None for a converted HAR or flow file)
        self.offsets: list[int | None] = []
        self.version = 0
        #: (version, kind, row index) of every change, for pages that reconnect; kind is "row" or "finding"
        self.changes: list[tuple[int, str, int]] = []
        self.lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []
        self.done = False  # no more rows will come (a file view); a live view is never done

    def add_row(self, row: Row, offset: int | None) -> None:
        with self.lock:
            self.rows.append(row)
            self.offsets.append(offset)
            self._by_label[(row.file, row.label)] = row.index
            self._changed("row", row.index)

    def add_finding(self, file: int, label: str, finding: FindingRow) -> bool:
        """Attach ``finding`` to its exchange's row; False if that exchange has no row (yet)."""
        with self.lock:
            index = self._by_label.get((file, label))
            if index is None:
                return False
            self.rows[index].findings.append(finding)
            self._changed("finding", index)
            return True

    def card(self, card: HeldCardRow) -> int:
        """The index of ``card``, added the first time it is seen."""
        key = (card.origin, card.fetched_in, card.fetched_by)
        with self.lock:
            index = self._card_index.get(key)
            if index is None:
                index = self._card_index[key] = len(self.cards)
                self.cards.append(card)
            return index

    def row_of(self, file: int, label: str) -> Row | None:
        index = self._by_label.get((file, label))
        return None if index is None else self.rows[index]

    def since(self, version: int) -> list[int]:
        """The rows changed after ``version``, each once, in the order of their first change."""
        with self.lock:  # the change numbered n is changes[n - 1]: versions count the changes
            changed = [index for _, _, index in self.changes[max(version, 0):]]
        return list(dict.fromkeys(changed))

    def listen(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` (from the feeding thread) after each change; returns the way to stop."""
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback) if callback in self._listeners else None

    def _changed(self, kind: str, index: int) -> None:
        self.version += 1
        self.changes.append((self.version, kind, index))
        for callback in list(self._listeners):
            callback()
