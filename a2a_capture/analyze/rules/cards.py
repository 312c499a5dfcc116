"""Card hygiene: a card is untrusted input, fetched over the network."""

from __future__ import annotations

import ipaddress
import re

from a2a_capture.a2a.cards import split_url
from a2a_capture.analyze.depends import CARD_FETCH
from a2a_capture.analyze.findings import Hit, rule
from a2a_capture.analyze.libraries import library_fix

#: a card larger than this is suspicious; real cards are a few kilobytes
MAX_CARD_BYTES = 256 * 1024

#: keys whose string values are secrets, wherever they sit in a card
_SECRET_KEYS = re.compile(r"(?i)^(?:.*(?:token|secret|password|passwd|api[-_]?key|credential|private[-_]?key)"
                          r"|authorization|bearer)$")
#: values that look like secrets whatever their key
_SECRET_VALUES = re.compile(
    r"(?:sk-[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|AKIA[0-9A-Z]{16}|xox[abpr]-[A-Za-z0-9-]{10,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----|(?i:bearer)\s+[A-Za-z0-9._~+/-]{16,}=*)"
)
#: keys that hold public material even though their names sound secret
_PUBLIC_KEYS = {"signature", "protected", "signatures", "tokenUrl", "refreshUrl", "authorizationUrl",
                "deviceAuthorizationUrl", "oauth2MetadataUrl", "openIdConnectUrl", "bearerFormat"}


def _loopback(host: str) -> bool:
    if host in ("localhost", "") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@rule(
    id="card-insecure-transport",
    on=("card",),
    depends=CARD_FETCH,
    severity="warning",
    title="Card fetched over plain HTTP from a remote host",
    spec="§7.1, §8.2",
    why="""
The card tells the client where to send its messages and which credentials to use. Fetched over
plain HTTP from anything but loopback, anyone on the path can rewrite it and send the client,
and its tokens, elsewhere. Production agents must use TLS.""",
    example="GET http://agents.example.com/.well-known/agent-card.json",
    good="GET https://agents.example.com/.well-known/agent-card.json (plain HTTP only to 127.0.0.1 or "
         "localhost)",
    fix="Fetch cards over HTTPS.",
    kind="advice",
)
def card_insecure_transport(call, session):
    if call.kind != "card" or call.agent is None:
        return
    if _plain_http_remote(call.agent):
        yield Hit(f"the card of {call.agent} came over plain HTTP")


def _plain_http_remote(agent: str) -> bool:
    parts = split_url(agent)
    return parts.scheme == "http" and not _loopback(parts.hostname or "")


@rule(
    id="card-redirect",
    on=("card",),
    depends=CARD_FETCH,
    severity="info",
    title="Card fetch redirected",
    spec="§8.2",
    why="""
A redirect on the well-known path costs a round trip on every discovery, and moves the trust
anchor of the card to another location.""",
    example="GET /.well-known/agent-card.json -> 301 Location: https://...",
    good="GET /.well-known/agent-card.json -> 200 with the card, at the URL the client was given",
    fix="Point clients at the final card URL, or serve the card where it is asked for.",
    kind="advice",
)
def card_redirect(call, session):
    if call.kind == "card" and call.status in (301, 302, 303, 307, 308):
        yield Hit(f"the card fetch was answered {call.status} to {call.response_header('location') or '?'}"
                  f"{library_fix(call, 'card-redirect', session)}")


@rule(
    id="card-oversized",
    on=("card",),
    depends=CARD_FETCH,
    severity="warning",
    title="Card larger than a card needs to be",
    spec="§8.6",
    why=f"""
A card is fetched on every discovery and often on every session. A card over
{MAX_CARD_BYTES // 1024} KiB slows every client and is a cheap way to exhaust one.""",
    example="a 2 MB card with an embedded icon",
    good="a card of a few KB that links to its icon (iconUrl) and documentation (documentationUrl)",
    fix="Keep the card small: link to icons and documentation instead of embedding them.",
    kind="advice",
)
def card_oversized(call, session):
    if call.kind == "card" and call.card_bytes > MAX_CARD_BYTES:
        yield Hit(f"the card is {call.card_bytes // 1024} KiB")


@rule(
    id="card-schema",
    on=("card",),
    depends=CARD_FETCH,
    severity="warning",
    title="Card does not follow the schema of its version",
    spec="§1.4 (the proto AgentCard is normative), §5.5 (JSON field names are camelCase)",
    why="""
Clients read the card to choose an interface and check capabilities. A card missing required
fields (supportedInterfaces, capabilities, skills, ...) leaves them guessing, and guesses cost
round trips; a client that validates the card refuses it. A card without protocolVersion is of
0.1 or 0.2: what 0.2 added (`skills[].tags`, ...) is named as 0.2's. A field spelled in
snake_case (`default_input_modes`, as a server that dumps its models without their JSON names
serves it) is, to a client, a field the card does not have, whichever version the card is of.""",
    example="a 1.0 card without supportedInterfaces; a 0.3 card with supports_authenticated_extended_card",
    good="a 1.0 card with supportedInterfaces; a 0.3 card with supportsAuthenticatedExtendedCard",
    fix="Serve a card that validates against the AgentCard schema of its version, with camelCase names.",
    kind="advice",
)
def card_schema(call, session):
    if call.kind == "card" and call.card is not None and call.card.problems:
        problems = call.card.problems
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        yield Hit(f"the card of {call.card.name or call.agent}: {'; '.join(problems[:3])}{more}")


@rule(
    id="card-secret",
    on=("card",),
    depends=CARD_FETCH,
    severity="error",
    title="Card carries something that looks like a secret",
    spec="§13.3",
    why="""
A card is public: anyone can fetch it, and captures, logs and caches keep it. A token, key or
password inside it is disclosed to all of them.""",
    example='"apiKey": "sk-live-…" inside a card',
    good='securitySchemes: {"apiKey": {"apiKeySecurityScheme": {"name": "X-Api-Key", "location": '
         '"header"}}}: the card names the scheme, the key travels in each request',
    fix="Remove the secret from the card and rotate it.",
    kind="advice",
)
def card_secret(call, session):
    if call.kind != "card" or not isinstance(call.response_json, dict):
        return
    found = sorted(set(_secrets(call.response_json, "$")))
    if found:
        more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        yield Hit(f"the card holds what looks like a secret at {', '.join(found[:3])}{more}")


def _secrets(value, path: str, depth: int = 0):
    if depth > 20:
        return
    if isinstance(value, dict):
        for key, child in value.items():
            if key in _PUBLIC_KEYS:
                continue
            where = f"{path}.{key}"
            if isinstance(child, str) and child and _SECRET_KEYS.match(str(key)) and not child.startswith("http"):
                yield where
            else:
                yield from _secrets(child, where, depth + 1)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _secrets(child, f"{path}[{index}]", depth + 1)
    elif isinstance(value, str) and _SECRET_VALUES.search(value):
        yield path
