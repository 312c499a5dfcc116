"""client.py's session with the fixes its findings name for python-a2a's client, run in the stack's venv.

    python fixed.py BASE_URL

python-a2a 0.5.10's A2AClient has no way to any of them: it probes 0.2's card paths as it is made
(`_fetch_agent_card`), posts 0.1's tasks/send to `{url}/tasks/send` and its guesses before the url itself
(`send_message`, `_send_task`), and calls `requests.post` afresh for each request. So no A2AClient is
made: the card is read at /.well-known/agent-card.json, and the message python-a2a's `Message` gives in
the A2A shape (`to_google_a2a()`, with its id as `messageId`, as A2AClient's own message/send does) is
sent as message/send to the url the card declares for JSON-RPC 0.3 (a 0.3 card's `url`, or a 1.0 card's
0.3 interface), both through one `requests.Session`.
Prints {"task": the task's id, "reply": the text of its artifacts}.
"""

from __future__ import annotations

import json
import sys
import warnings

warnings.filterwarnings("ignore")  # python-a2a warns about the LLM SDKs it is not given

import requests  # noqa: E402
from python_a2a import Message, MessageRole, TextContent  # noqa: E402

if __name__ == "__main__":
    http = requests.Session()
    card = http.get(sys.argv[1].rstrip("/") + "/.well-known/agent-card.json", timeout=30).json()      # card
    message = Message(content=TextContent(text="run"), role=MessageRole.USER).to_google_a2a()
    message["messageId"] = message["metadata"]["message_id"]
    url = card.get("url") or next(interface["url"] for interface in card.get("supportedInterfaces", [])
                                  if (interface["protocolBinding"], interface["protocolVersion"]) == ("JSONRPC", "0.3"))
    answer = http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "message/send",                 # message/send
                                  "params": {"message": message}}, timeout=30).json()["result"]
    texts = [part.get("text", "") for artifact in answer.get("artifacts", []) for part in artifact["parts"]]
    print(json.dumps({"task": answer["id"], "reply": "".join(texts)}))
