"""Peak memory of `analyze` by output format on a session with very many findings.

The session is captures/04-polling.http followed by POLLS more polls of the task it saw
end, each a wasted round trip. Every format writes its findings out as the analysis finds
them (JSON and JUnit spool to a temporary file what their document puts after the
summary or groups by rule), so peak RSS should stay flat however many findings there are.

    python bench/findings.py                        # 100,000 wasted polls
    python bench/findings.py --polls 10000 --format json
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import measure, run_child

from a2a_capture.capture import CaptureWriter, read_capture

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ["text", "json", "sarif", "junit"]


def generate(path: Path, polls: int) -> int:
    """The polling capture, then ``polls`` copies of its last poll, each 50 ms after the one before."""
    source = read_capture(ROOT / "captures" / "04-polling.http").exchanges
    last, writer = source[-1], CaptureWriter()
    ended = last.meta.ended_at.timestamp()
    with open(path, "wb") as out:
        out.write(writer.preamble(meta=[("format", "a2a-capture/1")]))
        for exchange in source:
            out.write(writer.block(exchange))
        for number in range(len(source) + 1, len(source) + polls + 1):
            start = ended + 0.05 * (number - len(source))
            meta = last.meta.model_copy(update={"start": _stamp(start), "end": _stamp(start + 0.01)})
            out.write(writer.block(last.model_copy(update={"number": number, "meta": meta})))
    return len(source) + polls


def _stamp(seconds: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def run_analyze(output_format: str, path: str) -> dict:
    from click.testing import CliRunner

    from a2a_capture.cli import main
    result = CliRunner().invoke(main, ["analyze", "--format", output_format, "--fail-on", "never",
                                       "-o", os.devnull, path])
    if result.exit_code != 0:
        raise SystemExit(f"analyze failed: {result.output}{result.exception!r}")
    return {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--polls", type=int, default=100_000, help="wasted polls after the session (default 100,000)")
    parser.add_argument("--format", choices=FORMATS, action="append", help="only these formats")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run_child(lambda: run_analyze(*args.child))
        return
    with tempfile.TemporaryDirectory(prefix="a2a-bench-findings-") as tmp:
        path = Path(tmp) / "polls.http"
        count = generate(path, args.polls)
        print(f"{count} exchanges, {os.path.getsize(path) / 1e6:.0f} MB; analyze -o {os.devnull}:")
        print(f"{'format':<8} {'cpu s':>8} {'peak MB':>8}")
        for output_format in args.format or FORMATS:
            result = measure(__file__, output_format, path)
            print(f"{output_format:<8} {result['seconds']:8.2f} {result['max_rss_mb']:8.0f}")


if __name__ == "__main__":
    main()
