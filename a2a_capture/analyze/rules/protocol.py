"""How a call is sent: version header, method spelling, interface, tenant, credentials, body."""

from __future__ import annotations

import fnmatch

from a2a_capture.a2a import spec
from a2a_capture.analyze.depends import INTERFACE, has_credentials
from a2a_capture.analyze.findings import Hit, ref, rule
from a2a_capture.analyze.libraries import library_fix


def _matching_interfaces(call, session, loosely: bool = False):
    """The declared interfaces a call went to; ``loosely``: the one it meant, a trailing slash apart."""
    return session.interfaces_called(call, loosely)


@rule(
    id="version-header-missing",
    on=("a2a",),
    depends=INTERFACE,
    severity="error",
    title="A 1.0 call without A2A-Version",
    spec="§3.6.1, §3.6.2",
    why="""
A 1.0 client must send `A2A-Version: 1.0` on every request. A server treats a request without
it as 0.3, so a 1.0 method is answered with VersionNotSupportedError (-32009) or handled with
0.3 semantics, and the client has to send it again.""",
    example="POST /rpc with method SendMessage and no A2A-Version header",
    good="POST /rpc with method SendMessage and A2A-Version: 1.0",
    fix="Send `A2A-Version: 1.0` on every request.",
    lenient="this agent takes 1.0 calls without A2A-Version; an agent that follows §3.6.2 reads them as 0.3 "
            "and refuses them",
    fails_as=spec.REFUSED_VERSION,
)
def version_header_missing(call, session):
    if call.is_a2a and call.spelled_version == "1.0" and not call.version_header:
        answer = f"; the agent answered {call.error.name}" if call.error else ""
        held = session.held_card(call)
        spelling = {"JSONRPC": "method", "GRPC": "rpc"}.get(call.binding or "", "route")
        yield Hit(f"{call.operation} is a 1.0 {spelling} but the "
                  f"request has no A2A-Version header, so the agent must treat it as 0.3{answer}",
                  [held.fetch] if held else [])


@rule(
    id="method-version-mismatch",
    on=("a2a",),
    depends=INTERFACE,
    severity="error",
    title="Method or route of the wrong protocol version",
    spec="§3.6.2, §8.3.2",
    why="""
0.3 spells methods `message/send`, `tasks/get`, ... and routes under `/v1`; 1.0 spells them
`SendMessage`, `GetTask` and routes without `/v1`. Sending one version's name to an interface
that speaks the other (or with an A2A-Version header that says the other) fails with
MethodNotFoundError (-32601) or VersionNotSupportedError. A card without protocolVersion (0.2
or before) does not say whether 0.1 (`tasks/send`) or 0.2 (`message/send`): a 0.3 or 1.0 name is
wrong for both, a message sent by one of their names only once the agent has refused it.""",
    example="POST /rpc with A2A-Version: 1.0 and method message/send",
    good="POST /rpc with A2A-Version: 1.0 and method SendMessage; or A2A-Version: 0.3 and message/send "
         "to a 0.3 interface",
    fix="Use the names of the version the chosen interface declares, and say that version in A2A-Version.",
    fails_as=spec.REFUSED_VERSION,
)
def method_version_mismatch(call, session):
    fault = _version_fault(call, session)
    if fault is None:
        return
    name = call.rpc_method or f"{call.method} {call.path}"
    said, declared = fault
    if said == "header":
        header = call.version_header
        yield Hit(f"{name} is a {call.spelled_version} name but the request says A2A-Version: {header}",
                  lenient=f"this agent accepts {call.spelled_version} names under A2A-Version {header}; an agent "
                          "that follows the spec refuses them")
        return
    held = session.held_card(call)
    right = [spec.method_name(call.operation, v) for v in sorted(declared)] if call.rpc_method else []
    instead = f" (that interface calls it {' or '.join(dict.fromkeys(r for r in right if r))})" \
        if any(right) else ""
    if said == "before 0.3":  # a card of 0.2 or before: its agent speaks `declared`, or showed which one by refusing
        speaks = " or ".join(sorted(declared))
        spelled = "/".join(spec.LEGACY_METHOD_VERSIONS.get(call.rpc_method or "", ("", (call.spelled_version,)))[1])
        why = " and the agent refused it: it speaks" if len(declared) < len(spec.VERSIONS_BEFORE_0_3) \
            else ": its agent speaks"
        yield Hit(f"{name} is a {spelled} name, but the card ({ref(held.fetch, call)}) has no protocolVersion "
                  f"(0.2 or before){why} A2A {speaks}{instead}", [held.fetch],
                  lenient=f"this agent accepts {call.spelled_version} names; an agent of A2A {speaks} refuses them")
        return
    versions = ", ".join(sorted(declared))
    if said == "card":
        instead = instead.replace("that interface calls it", "the card's interface calls it")
    where = "the interface it was sent to declares" if said == "interface" else \
        f"it was sent to an address the card ({ref(held.fetch, call)}) does not declare, whose {call.binding} " \
        "interfaces declare"
    yield Hit(f"{name} is a {call.spelled_version} name, but {where} protocolVersion {versions}{instead}"
              f"{library_fix(call, 'method-version-mismatch', session)}", [held.fetch] if held else [],
              lenient=f"this agent accepts {call.spelled_version} names; an agent that follows its card "
                      "refuses them",
              cause=f"the card's {call.binding} interfaces at {call.agent} declare protocolVersion {versions}; this "
                    f"client spells its calls in {call.spelled_version}")


def _version_fault(call, session) -> tuple[str, set[str]] | None:
    """Whether the call spells its method or route in a version that its A2A-Version header
    ("header") or the interface it went to ("interface", the versions declared) does not speak."""
    if not call.is_a2a or call.spelled_version is None:
        return None
    versions = spec.LEGACY_METHOD_VERSIONS.get(call.rpc_method or "", (None, None))[1]
    header = call.version_header
    if header and not spec.spells(call.spelled_version, versions, header):
        return "header", set()
    declared = session.declared_versions(call)
    if declared and not _spoken_by_any(call.spelled_version, versions, declared):
        return "interface", set(declared)
    if not declared and not _matching_interfaces(call, session, loosely=True):  # sent where the card declares nothing
        everywhere = _card_versions(call, session)
        if everywhere and not _spoken_by_any(call.spelled_version, versions, everywhere):
            return "card", set(everywhere)
    if not declared and _before_0_3(call, session):
        speaks = {v for v in spec.VERSIONS_BEFORE_0_3 if spec.spells(call.spelled_version, versions, v)}
        if not speaks:  # a name of 0.3 or 1.0: no agent of 0.2 or before knows it
            return "before 0.3", set(spec.VERSIONS_BEFORE_0_3)
        if len(speaks) == 1 and call.operation == "SendMessage" and call.error is not None \
                and call.error.name in spec.REFUSED_VERSION:  # every agent sends messages: refused, it is the name
            return "before 0.3", set(spec.VERSIONS_BEFORE_0_3) - speaks  # 0.1's name refused: it speaks 0.2
    return None


def _spoken_by_any(name_version: str, versions: tuple[str, ...] | None, declared: frozenset[str]) -> bool:
    """Whether a name of ``name_version`` belongs to any of the versions an interface declares (an
    interface that declares none, as cards before 0.3 do, tells nothing of the names it expects:
    `_before_0_3` tells what it can)."""
    return any(spec.spells(name_version, versions, version) for version in declared)


def _card_versions(call, session) -> frozenset[str]:
    """The versions the held card declares for the call's binding (else for any binding): what a call
    sent to an address the card does not declare is judged by."""
    held = session.held_card(call)
    if held is None:
        return frozenset()
    interfaces = held.card.interfaces
    same = [i for i in interfaces if i.binding.upper() == (call.binding or "").upper()] or interfaces
    return frozenset(i.version for i in same if i.version)


def _before_0_3(call, session) -> bool:
    """Whether the call went to an agent whose card is of 0.2 or before (no protocolVersion), at one of its
    interfaces or elsewhere: its names are judged wherever they were sent."""
    held = session.held_card(call)
    return held is not None and held.card.before_0_3


@rule(
    id="interface-undeclared",
    on=("a2a",),
    depends=INTERFACE,
    severity="warning",
    title="Call to an interface the card does not declare",
    spec="§8.3.2",
    why="""
A client must send each call to the `url` of an interface the card declares for the binding it
uses. A call to another path or host (an old endpoint, a guessed `/rpc`, the card's origin) is
at best redirected and usually answered 404 or 405.""",
    example="POST /rpc when the card declares JSONRPC at http://host/a2a/jsonrpc",
    good="POST http://host/a2a/jsonrpc: the url of a JSONRPC interface in supportedInterfaces",
    fix="Pick an interface from `supportedInterfaces` and use its `url` exactly.",
    lenient="this agent also answers at an address its card does not declare; an agent that follows its card "
            "answers 404",
    fails_as=spec.REFUSED_ADDRESS,
)
def interface_undeclared(call, session):
    held = session.held_card(call)
    if not call.is_a2a or held is None or not held.card.interfaces:
        return
    if _matching_interfaces(call, session):
        return
    declared = [f"{i.binding} {session.address_of(i)}" for i in held.card.interfaces]
    where = call.path if call.binding == "JSONRPC" else (call.base_path or "/")
    doubled = _url_doubling(call, session, below=True)
    cause = None
    if doubled is not None:
        url, segment = doubled
        cause = (f"the card's HTTP+JSON url {url} ends in /{segment}, which the routes add again; this client "
                 f"leaves the url's /{segment} out and adds /{segment}/… routes itself")
    yield Hit(f"{call.binding} call to {call.agent}{where}, which the card ({ref(held.fetch, call)}) does not "
              f"declare; it declares {'; '.join(declared)}{library_fix(call, 'interface-undeclared', session)}",
              [held.fetch], cause=cause)


def _url_doubling(call, session, below: bool) -> tuple[str, str] | None:
    """A declared HTTP+JSON interface whose url ends in the segment the call's route begins with (a
    0.3 url ending in /v1, whose routes are /v1/…): its address and that segment. ``below``: the call
    went to the url without that segment (the client adds the prefix itself); else to the url (the
    client adds the routes to the url, as the spec says, and the prefix is there twice)."""
    base = (call.base_path or "").rstrip("/")
    route = (call.path or "")[len(call.base_path or ""):]
    if call.binding != "HTTP+JSON" or not route.startswith("/") or call.path is None:
        return None
    segment = route.split("/", 2)[1]
    held = session.held_card(call)
    for interface in held.card.interfaces if held is not None else ():
        path = interface.path
        if interface.binding.upper() != "HTTP+JSON" or not segment or not path.endswith("/" + segment) \
                or call.agent not in session.origins_of(interface):
            continue
        if (base == path[: -len(segment) - 1]) if below else (base == path):
            return session.address_of(interface), segment
    return None


@rule(
    id="interface-url-doubled",
    on=("a2a",),
    needs=("error",),
    severity="error",
    title="A route prefix sent twice: the card's url already ends in it",
    spec="§8.3.2, §11.3 (0.3 HTTP+JSON routes)",
    why="""
A REST client adds each route to the interface's `url` as the card states it. In 0.3 the routes
begin with `/v1` (`/v1/message:send`), so a card whose `url` already ends in `/v1` sends a
client that follows the spec to `…/v1/v1/message:send`, which the agent answers 404. The fault
is the card's `url`; the failed call is the developer's first sight of it.""",
    example="card: HTTP+JSON 0.3 at http://host/api/v1; POST /api/v1/v1/message:send answered 404",
    good="card: HTTP+JSON 0.3 at http://host/api; POST /api/v1/message:send",
    fix="Make the card's `url` the base the routes are added to (drop the trailing `/v1`).",
    fails_as=spec.REFUSED_ADDRESS,
)
def interface_url_doubled(call, session):
    if not call.is_a2a or call.status not in (404, 405):
        return
    doubled = _url_doubling(call, session, below=False)
    if doubled is None:
        return
    url, segment = doubled
    held = session.held_card(call)
    yield Hit(f"{call.method} {call.path} has /{segment} twice: the card's ({ref(held.fetch, call)}) HTTP+JSON url "
              f"{url} ends in /{segment}, and the client added the route /{segment}/… to it as the spec says; the "
              f"agent answered {call.status}", [held.fetch],
              cause=f"the card's HTTP+JSON url {url} ends in /{segment}, which the routes add again; this client "
                    f"adds the routes to the url as the spec says, so /{segment} is there twice")


@rule(
    id="interface-not-preferred",
    on=("a2a",),
    depends=INTERFACE,
    severity="info",
    title="A later interface used where the first speaks the same binding",
    spec="§8.3.1, §8.3.2",
    why="""
The card lists its interfaces in order of preference. When the first entry for a binding speaks
the same protocol version, a client that picks a later one goes against the agent's stated
preference (often a slower or deprecated endpoint).""",
    example="card: JSONRPC 1.0 at /a2a, JSONRPC 1.0 at /legacy; the client posts to /legacy",
    good="card: JSONRPC 1.0 at /a2a, JSONRPC 1.0 at /legacy; the client posts to /a2a",
    fix="Use the first declared interface of the binding and version you speak.",
    kind="advice",
)
def interface_not_preferred(call, session):
    held = session.held_card(call)
    if not call.is_a2a or held is None:
        return
    matching = _matching_interfaces(call, session)
    if not matching:
        return
    used = matching[0]
    for interface in held.card.interfaces:
        if interface.binding.upper() == used.binding.upper() and interface.version == used.version:
            if interface is not used and interface.url != used.url:
                yield Hit(f"sent to {session.address_of(used)}, but the card prefers {session.address_of(interface)} "
                          f"for {used.binding} "
                          f"{used.version or ''}".rstrip(), [held.fetch])
            return


@rule(
    id="tenant-not-echoed",
    on=("a2a",),
    depends=INTERFACE,
    severity="warning",
    title="Tenant of the chosen interface not sent",
    spec="§8.3.2",
    why="""
When the chosen interface declares a `tenant`, the client must put it into every request
(JSON-RPC `params.tenant`, REST path prefix). Without it the agent routes the call to the wrong
tenant and answers TaskNotFound or an error.""",
    example="interface tenant 'acme'; POST /rpc with params lacking tenant",
    good='interface tenant "acme"; POST /rpc with params {"tenant": "acme", ...}',
    fix="Copy the interface's `tenant` into every request.",
    lenient="this agent fell back to a default tenant; an agent that follows its card refuses or misroutes the call",
)
def tenant_not_echoed(call, session):
    if not call.is_a2a:
        return
    for interface in _matching_interfaces(call, session):
        if not interface.tenant:
            continue
        if call.binding == "JSONRPC" and call.tenant != interface.tenant:
            yield Hit(f"the interface declares tenant {interface.tenant!r} but params.tenant is "
                      f"{call.tenant!r}", [session.held_card(call).fetch])
        elif call.binding == "HTTP+JSON" and not (call.base_path or "").rstrip("/").endswith("/" + interface.tenant):
            yield Hit(f"the interface declares tenant {interface.tenant!r} but the path {call.path} does not carry it",
                      [session.held_card(call).fetch])
        return


@rule(
    id="auth-missing",
    on=("a2a",),
    depends=INTERFACE,
    severity="error",
    title="Request without credentials to an agent that requires them",
    spec="§7.3, §3.3.2",
    why="""
When the card declares security requirements, every request must carry credentials in the
transport (Authorization, an API key, a cookie). A request without them is answered 401 or 403
and sent again: the card had said so before the first attempt.""",
    example="POST /rpc without Authorization to an agent whose card requires a bearer token",
    good="POST /rpc with Authorization: Bearer … to an agent whose card requires a bearer token",
    fix="Send the credentials the card's `securityRequirements` name on every request.",
    lenient="this agent let the call through without credentials; an agent that enforces its card answers 401",
    fails_as=spec.REFUSED_CREDENTIALS,
)
def auth_missing(call, session):
    held = session.held_card(call)
    if not call.is_a2a or held is None or not held.card.requires_auth:
        return
    if has_credentials(call, held.card):
        return
    answer = f"; the agent answered {call.status} {call.error.name}" if call.error and call.status else ""
    schemes = ", ".join(sorted({name for requirement in held.card.security_requirements for name in requirement}))
    yield Hit(f"{call.operation or call.method} sent without credentials although the card ("
              f"{ref(held.fetch, call)}) requires {schemes}{answer}", [held.fetch])


def _accepts(modes: list[str], media: str) -> bool:
    plain = (mode.split(";")[0].strip().lower() for mode in modes)
    return any(fnmatch.fnmatch(media, spec.MODALITIES.get(mode, mode)) for mode in plain)


@rule(
    id="input-mode",
    on=("SendMessage", "SendStreamingMessage"),
    severity="error",
    title="Part of a media type the agent does not accept",
    spec="§3.3.2 (AgentCard.defaultInputModes, AgentSkill.inputModes)",
    why="""
The card lists the media types the agent accepts (`defaultInputModes`, and per skill
`inputModes`). A part of any other type is refused with ContentTypeNotSupportedError (-32005).
Cards of 0.1 wrote kinds of part instead (`text`), which cover their media types (`text/*`).""",
    example="a part with mediaType image/png to an agent whose input modes are text/plain only",
    good="a part with mediaType text/plain to an agent whose input modes are text/plain",
    depends=INTERFACE,
    fix="Send only media types the card lists, or convert the content first.",
    lenient="this agent took a media type its card does not list; an agent that follows its card refuses it",
    fails_as=spec.REFUSED_INPUT,
)
def input_mode(call, session):
    if call.operation not in ("SendMessage", "SendStreamingMessage") or not call.part_media_types:
        return
    held = session.held_card(call)
    if held is None:
        return
    modes = held.card.accepted_input_modes()
    if not modes:
        return
    refused = sorted({media for media in call.part_media_types if not _accepts(modes, media)})
    if refused:
        yield Hit(f"a part of type {', '.join(refused)}, which the card ({ref(held.fetch, call)}) does not "
                  f"accept; it accepts {', '.join(dict.fromkeys(modes))}", [held.fetch])


@rule(
    id="malformed-request",
    on=("a2a",),
    severity="error",
    title="Request the agent could not parse or validate",
    spec="§9.5, §11.6",
    why="""
A body that is not JSON (-32700), not a valid JSON-RPC request (-32600), or whose params fail
validation (-32602; HTTP+JSON 400 INVALID_ARGUMENT) is a round trip that could only fail. A
method of another protocol version refused so (a2a-sdk 0.2 answers -32600) is
`method-version-mismatch`'s, and a call on a finished task the task rules'.""",
    example='POST /rpc with body {"jsonrpc": "2.0", "method": ',
    good='POST /rpc with body {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": '
         '{"message": {...}}}',
    fix="Build requests from the spec's schema and validate them before sending.",
    fails_as=spec.REFUSED_MALFORMED,
    needs=("error",),
)
def malformed_request(call, session):
    if not call.is_a2a or call.error is None:
        return
    error = call.error
    malformed = error.name in spec.MALFORMED_ERRORS or error.reason in ("INVALID_ARGUMENT", "INVALID_REQUEST",
                                                                        "INVALID_PARAMS")
    if call.binding == "HTTP+JSON" and error.http_status == 400 and _rest_status(call) == "INVALID_ARGUMENT":
        malformed = True
    if malformed and (error.task_ended or _version_fault(call, session)):
        return  # a valid call on a finished task, or one of another version (0.2 answers -32600): others say so
    if malformed:
        what = error.name or f"HTTP {error.http_status}"
        detail = f": {error.message}" if error.message else ""
        body = " (the body is not JSON)" if call.request_json_error else ""
        yield Hit(f"the agent rejected the request as {what}{detail}{body}")


def _rest_status(call) -> str | None:
    body = call.response_json
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        status = body["error"].get("status")
        return status if isinstance(status, str) else None
    return None
