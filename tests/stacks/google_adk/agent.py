"""An agent served by ADK's own A2A server (`to_a2a`), run in the stack's venv, with no model: a
BaseAgent whose answer is rule-based (it repeats what it was asked, upper-cased).

    python agent.py --port 41241

127.0.0.1 only.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncGenerator

import uvicorn
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.genai import types


class Shouter(BaseAgent):
    """Answers each message with its text upper-cased: no model."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        said = " ".join(part.text or "" for part in (ctx.user_content.parts if ctx.user_content else []))
        yield Event(author=self.name, invocation_id=ctx.invocation_id,
                    content=types.Content(role="model", parts=[types.Part(text=said.upper())]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = to_a2a(Shouter(name="shouter", description="Shouts back."), host="127.0.0.1", port=args.port)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
