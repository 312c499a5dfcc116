#!/bin/sh
# A client made of curl, for the action's recorded job (.github/workflows/a2a-capture.yml) and its
# test: it reads the card through the first recorder listener ($A2A_CAPTURE_LISTENERS), then sends
# one message to the JSON-RPC interface the card names. With A2A_CLIENT_NO_VERSION=1 it leaves out
# the A2A-Version header, a mistake the analyzer finds (missing-version).
set -eu
listener=${A2A_CAPTURE_LISTENERS%% *}
card=$(curl --silent --show-error --fail "$listener/.well-known/agent-card.json")
url=$(printf '%s' "$card" | python3 -c '
import json, sys
card = json.load(sys.stdin)
print(next(i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "JSONRPC"))')
version="A2A-Version: 1.0"
[ "${A2A_CLIENT_NO_VERSION:-}" != 1 ] || version="X-No-Version: 1"
curl --silent --show-error --fail "$url" -H "Content-Type: application/json" -H "$version" \
  -d '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
       {"messageId": "curl-1", "role": "ROLE_USER", "parts": [{"text": "run"}]}}}'
echo
