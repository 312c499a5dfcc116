"""An agent served by nodus-a2a-wire (an independent A2A 1.0 HTTP+JSON server on the standard
library), run in the stack's venv.

    python agent.py --port 41241 [--token SECRET]

Its card declares one HTTP+JSON 1.0 interface (with "tenant": ""), no streaming, no push, and a
bearer scheme it requires. It serves only GET /.well-known/agent-card.json (with Cache-Control:
max-age=3600) and POST /message:send, which answers with a message (never a task); it refuses
the 0.3 card path (404), every other operation (501, UNSUPPORTED_OPERATION), an A2A-Version
other than 1.x (400, VERSION_NOT_SUPPORTED), and, with --token, a call without that bearer
token (401). Without A2A-Version it answers anyway. 127.0.0.1 only.
"""

from __future__ import annotations

import argparse

from nodus_a2a_wire import A2AHttpServer, ServerConfig

TOOLS = [{"name": "run", "description": "Runs the job it is given.", "tags": ["test"]}]


def invoke(name: str, args: dict) -> str:
    return "done"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", help="the bearer token every call must carry (default: none needed)")
    args = parser.parse_args()
    config = ServerConfig(base_url=f"http://127.0.0.1:{args.port}", agent_name="nodus",
                          agent_description="a nodus-a2a-wire agent for a2a-capture's tests",
                          token_validator=(lambda token: token == args.token) if args.token else None,
                          host="127.0.0.1", port=args.port)
    A2AHttpServer(config, invoke=invoke, tool_names=["run"], tools=TOOLS).serve()


if __name__ == "__main__":
    main()
