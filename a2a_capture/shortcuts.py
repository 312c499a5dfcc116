"""One switch for every shortcut: ``A2A_CAPTURE_NO_SHORTCUTS=1`` (read once, at import) makes every
fast path take the general one, so the whole test suite can show the two give the same (``.ci/run``
runs the fast tier both ways). The shortcuts it turns off:

- the reader's straight-line reading of common recorded blocks (``CaptureReader.quick``)
- the engine skipping rules for a call like one they found nothing for (``Rule.depends``)
"""

from __future__ import annotations

import os

#: False when ``A2A_CAPTURE_NO_SHORTCUTS`` is set to anything but "" or "0"
ENABLED = os.environ.get("A2A_CAPTURE_NO_SHORTCUTS", "") in ("", "0")
