"""The detail of one exchange, read again from its file when the page asks for it.

The listing is the report's own (``report.excerpt.listing``: the same cuts, the same evidence
kept, ``whole`` on demand), of the exchange masked as the report masks it, so the view has no
second idea of how an exchange is shown.
"""

from __future__ import annotations

import io
import json

from a2a_capture.capture.models import Exchange
from a2a_capture.capture.reader import CaptureReader
from a2a_capture.errors import A2ACaptureError
from a2a_capture.report.excerpt import RULE_FOCUS, listing
from a2a_capture.sources import capture
from a2a_capture.view.state import ViewState

#: frames listed with their arrival times, at most
MAX_FRAMES = 500
#: characters of a frame's data shown in the frame list (the listing has the frame itself)
FRAME_DATA = 200


class Details:
    """Reads exchanges back for the page; converted files (HAR, flows) are held once read."""

    def __init__(self, state: ViewState, masker=None) -> None:
        self.state, self.masker = state, masker
        self._converted: dict[int, dict[str, Exchange]] = {}

    def exchange(self, index: int) -> Exchange | None:
        state = self.state
        row = state.rows[index]
        offset = state.offsets[index]
        path = state.files[row.file]
        if offset is None:
            held = self._converted.get(row.file)
            if held is None:
                held = self._converted[row.file] = {e.label: e for e in capture(path).exchanges}
            return held.get(row.label)
        end = next((state.offsets[i] for i in range(index + 1, len(state.rows)) if state.rows[i].file == row.file),
                   None)
        with open(path, "rb") as stream:
            stream.seek(offset)
            data = stream.read() if end is None else stream.read(end - offset)
        try:
            for exchange in CaptureReader(io.BytesIO(data), path):
                return exchange
        except A2ACaptureError:
            return None
        return None

    def detail(self, index: int, whole: bool = False) -> dict:
        """What the detail pane shows of row ``index``: the listing, its note, the frames, findings and card."""
        state = self.state
        row = state.rows[index]
        exchange = self.exchange(index)
        result: dict = {"row": row.as_json(), "file": state.files[row.file], "whole": whole}
        if exchange is None:
            result["error"] = "this exchange could not be read again from its file (was the file changed?)"
            return result
        shown = self.masker.exchange(exchange) if self.masker is not None else exchange
        focus = set().union(*(RULE_FOCUS.get(finding.rule, set()) for finding in row.findings))
        out, note = listing(shown, whole=whole, extra_keys=focus or None, layout=True)
        result["listing"] = out.text
        result["note"] = self._text(note)
        result["cut"] = out.cut
        result["frames"] = _frames(shown)
        result["related"] = {label: related.index for finding in row.findings for label in finding.related
                             if (related := state.row_of(row.file, label)) is not None}
        if row.card is not None:
            card = state.cards[row.card]
            fetched = state.row_of(card.fetched_in, card.fetched_by)
            result["card"] = {"name": card.name, "origin": card.origin, "fetched_by": card.fetched_by,
                              "fetched_row": fetched.index if fetched is not None else None,
                              "streaming": card.streaming, "push_notifications": card.push_notifications,
                              "extended_card": card.extended_card, "stated": dict(card.stated),
                              "interfaces": [list(i) for i in card.interfaces]}
        return result

    def _text(self, text: str) -> str:
        return self.masker.text(text) if self.masker is not None else text


def _frames(exchange: Exchange) -> list[dict]:
    response = exchange.response
    if response is None or not response.is_event_stream:
        return []
    frames = []
    for number, event in enumerate(response.events[:MAX_FRAMES], 1):
        kind, state = ("ping", "") if event.is_ping else _frame_kind(event.data)
        frames.append({"n": number, "at": event.at, "kind": kind, "state": state, "event": event.event or "",
                       "data": (event.data or "")[:FRAME_DATA]})
    return frames


def _frame_kind(data: str | None) -> tuple[str, str]:
    """(what a frame carries, the task state it shows) read off its JSON, for the frame list."""
    try:
        value = json.loads(data or "")
    except ValueError:
        return "data", ""
    if isinstance(value, dict) and isinstance(value.get("result"), dict):
        value = value["result"]
    if not isinstance(value, dict):
        return "data", ""
    for kind in ("statusUpdate", "artifactUpdate", "task", "message"):
        if isinstance(value.get(kind), dict):
            inner = value[kind]
            return kind, str((inner.get("status") or {}).get("state", "")) if kind != "message" else ""
    kind = str(value.get("kind", "data"))
    return kind, str((value.get("status") or {}).get("state", "")) if isinstance(value.get("status"), dict) else ""

