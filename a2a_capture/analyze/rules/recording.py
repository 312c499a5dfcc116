"""Recording: what the capture itself says it missed, so a report does not pass over it."""

from __future__ import annotations

from a2a_capture.analyze.findings import Hit, rule
from a2a_capture.capture.notes import unrecorded_origin


@rule(
    id="unrecorded-origin",
    severity="warning",
    title="Card names an origin the recording did not front",
    spec="§8.2",
    why="""
In reverse mode the recorder points a relayed card's interfaces at its listeners, so a client
that follows the card keeps passing the recorder. An interface on a server that no listener of
the recording fronts cannot be pointed anywhere: a client that follows it calls that server
directly, and those calls are missing from this capture. The analysis then judges a session it
saw only part of.""",
    example="# a2a-capture: the card names http://10.0.0.7:9000, which no listener of this recording fronts",
    good="every origin the card names fronted by a listener of the recording (record --agent URL "
         "--listen HOST:PORT for each), or recorded as a forward proxy",
    fix="Record that server too: `a2a-capture record --agent URL --listen HOST:PORT` once per server the "
        "card names, or record as a forward proxy (`--proxy`).",
    on=None,  # the note sits on whatever exchange relayed the card
    kind="advice",
    needs=("notes",),
)
def unrecorded_origin_rule(call, session):
    for note in call.notes:
        origin = unrecorded_origin(note)
        if origin:
            yield Hit(f"the card names {origin}, which this recording did not front: calls the client made "
                      f"there are not in the capture")
