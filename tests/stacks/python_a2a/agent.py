"""An agent built with python-a2a (its Flask server), run in the stack's venv.

    python agent.py --port 41241 [--public-base URL]

python-a2a serves its card at /.well-known/agent.json, /agent.json and /a2a/agent.json (and
the 0.3 path), and answers JSON-RPC tasks/send at / and at /tasks/send. The task completes at
once with an artifact that echoes the text. 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import logging
import warnings

warnings.filterwarnings("ignore")  # python-a2a warns about the LLM SDKs it is not given

from python_a2a import A2AServer, AgentCard, TaskState, TaskStatus  # noqa: E402
from python_a2a.server.http import create_flask_app  # noqa: E402


class EchoAgent(A2AServer):
    def handle_task(self, task):
        message = task.message if isinstance(task.message, dict) else {}
        parts = message.get("parts") or [message.get("content") or {}]  # its own client sends "content"
        text = " ".join(part.get("text", "") for part in parts if isinstance(part, dict))
        task.artifacts = [{"parts": [{"type": "text", "text": f"done: {text}"}]}]
        task.status = TaskStatus(state=TaskState.COMPLETED)
        return task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--public-base", help="the URL the card advertises (default: this server)")
    parser.add_argument("--name", default="pya")
    args = parser.parse_args()
    card = AgentCard(name=args.name, description="a python-a2a agent for a2a-capture's tests",
                     url=args.public_base or f"http://127.0.0.1:{args.port}", version="1.0.0")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    create_flask_app(EchoAgent(agent_card=card)).run(host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
