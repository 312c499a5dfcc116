"""Text from a capture as a terminal is shown it: every control character written as an escape,
never sent, so a card name or a title cannot set the window title, colour or clear the screen.

C0 and C1 controls, DEL, the line and paragraph separators and the bidirectional overrides (which
reorder what follows them) are shown as `\\x1b`, `\\u202e`, ...; everything else passes as it is.
"""

from __future__ import annotations


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_SHOWN = {code: _escape(code) for code in (*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029,
                                           *range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def shown(text: str) -> str:
    """``text`` with its control characters escaped (one line of it: line breaks are escaped too)."""
    return text if text.isprintable() else text.translate(_SHOWN)  # a quick test for the common case


#: the controls JSON's own escaping leaves as they are (DEL, C1, the separators, the bidi overrides), as
#: JSON escapes: the document means the same and a terminal it is printed to shows them
_JSON_SHOWN = {code: f"\\u{code:04x}" for code in _SHOWN if code >= 0x7F}


def json_shown(document: str) -> str:
    """A JSON text (from ``json.dumps``) with the controls it still holds raw written as ``\\uXXXX``."""
    return document if document.isascii() else document.translate(_JSON_SHOWN)
