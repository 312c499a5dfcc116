"""A client session with python-a2a's own client, run in the stack's venv.

    python client.py BASE_URL

python-a2a's client looks for the card at /.well-known/agent.json, /agent.json and
/a2a/agent.json (0.2's paths and guesses), then sends the message as JSON-RPC tasks/send (0.2),
trying /tasks/send and other endpoints until one answers. Prints {"reply": text} at the end.
"""

from __future__ import annotations

import json
import sys
import warnings

warnings.filterwarnings("ignore")  # python-a2a warns about the LLM SDKs it is not given

from python_a2a import A2AClient, Message, MessageRole, TextContent  # noqa: E402

if __name__ == "__main__":
    client = A2AClient(sys.argv[1])
    reply = client.send_message(Message(content=TextContent(text="run"), role=MessageRole.USER))
    print(json.dumps({"reply": getattr(reply.content, "text", None) or getattr(reply.content, "message", None)}))
