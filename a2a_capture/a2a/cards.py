"""Agent cards of 1.0 and 0.3, read tolerantly into one model (§2 of the reference).

A card is untrusted input: reading never raises, and what the card gets wrong is kept as a
list of problems for the card-hygiene rules to report.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from urllib.parse import urlsplit

from pydantic import BaseModel, Field


class Interface(BaseModel):
    url: str
    binding: str  # JSONRPC, HTTP+JSON, GRPC, or a custom URI
    version: str | None = None  # Major.Minor
    tenant: str | None = None

    @property
    def origin(self) -> tuple[str, str, int]:
        return url_origin(self.url)

    @property
    def path(self) -> str:
        """The URL's path without a trailing slash."""
        return _url_paths(self.url)[1]

    @property
    def url_path(self) -> str:
        """The URL's path as written (a gRPC `host:port` has none)."""
        return _url_paths(self.url)[0]


class Skill(BaseModel):
    id: str = ""
    name: str = ""
    input_modes: list[str] = Field(default_factory=list)
    output_modes: list[str] = Field(default_factory=list)


class SecurityScheme(BaseModel):
    name: str
    kind: str  # apiKey, http, oauth2, openIdConnect, mutualTLS
    location: str | None = None  # apiKey: header, query or cookie
    parameter: str | None = None  # apiKey: the header, query parameter or cookie name
    scheme: str | None = None  # http: Bearer, Basic, ...


class Card(BaseModel):
    """What a client learns from a card, whichever version wrote it."""

    name: str = ""
    description: str = ""
    version: str = ""
    #: the protocol shape the JSON had: "1.0", "0.3" or "both" (a2a-sdk's hybrid cards)
    shape: str = "1.0"
    interfaces: list[Interface] = Field(default_factory=list)
    streaming: bool = False
    push_notifications: bool = False
    extended_card: bool = False
    #: capability -> how the card states it ("capabilities.streaming: false"), for each it sets: a
    #: capability that is off was declined, where a card without the field is silent
    stated: dict[str, str] = Field(default_factory=dict)
    required_extensions: list[str] = Field(default_factory=list)
    default_input_modes: list[str] = Field(default_factory=list)
    default_output_modes: list[str] = Field(default_factory=list)
    skills: list[Skill] = Field(default_factory=list)
    security_schemes: list[SecurityScheme] = Field(default_factory=list)
    #: each entry is one acceptable set of scheme names (OR of ANDs)
    security_requirements: list[list[str]] = Field(default_factory=list)
    fingerprint: str = ""
    problems: list[str] = Field(default_factory=list)

    def capability(self, name: str) -> bool:
        return {"streaming": self.streaming, "pushNotifications": self.push_notifications,
                "extendedAgentCard": self.extended_card}.get(name, False)

    @property
    def before_0_3(self) -> bool:
        """A card of A2A 0.2 or before: ``url``-shaped with no ``protocolVersion`` (0.3 requires one)
        or one below 0.3. Such an agent serves it at ``/.well-known/agent.json`` and spells its
        methods as 0.1 or 0.2 did (which of the two, the card does not say)."""
        return self.shape == "0.3" and bool(self.interfaces) and all(
            interface.version is None or _before(interface.version, (0, 3)) for interface in self.interfaces)

    @property
    def requires_auth(self) -> bool:
        return any(requirement for requirement in self.security_requirements)

    def accepted_input_modes(self) -> list[str]:
        modes = list(self.default_input_modes)
        for skill in self.skills:
            modes += skill.input_modes
        return modes

    def preferred(self, binding: str) -> Interface | None:
        """§8.3.2: the first declared interface of a binding the client speaks."""
        for interface in self.interfaces:
            if interface.binding.upper() == binding.upper():
                return interface
        return None


def parse_card(data: object, raw: bytes = b"") -> Card:
    """Read a card of any version; never raises."""
    fingerprint = hashlib.sha256(raw or json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]
    if not isinstance(data, dict):
        return Card(fingerprint=fingerprint, problems=["the card is not a JSON object"])
    has_new = "supportedInterfaces" in data
    has_old = "url" in data or "preferredTransport" in data or "additionalInterfaces" in data
    shape = "both" if has_new and has_old else ("0.3" if has_old else "1.0")
    capabilities = _dict(data.get("capabilities"))
    card = Card(
        name=_str(data.get("name")),
        description=_str(data.get("description")),
        version=_str(data.get("version")),
        shape=shape,
        interfaces=_interfaces(data),
        streaming=capabilities.get("streaming") is True,
        push_notifications=capabilities.get("pushNotifications") is True,
        extended_card=capabilities.get("extendedAgentCard") is True
        or data.get("supportsAuthenticatedExtendedCard") is True,
        stated=_stated(data, capabilities),
        required_extensions=[_str(ext.get("uri")) for ext in _list(capabilities.get("extensions"))
                             if isinstance(ext, dict) and ext.get("required") is True],
        default_input_modes=_strings(data.get("defaultInputModes")),
        default_output_modes=_strings(data.get("defaultOutputModes")),
        skills=[_skill(skill) for skill in _list(data.get("skills")) if isinstance(skill, dict)],
        security_schemes=_schemes(_dict(data.get("securitySchemes"))),
        security_requirements=_requirements(data),
        fingerprint=fingerprint,
        problems=schema_problems(data, shape),
    )
    return card


#: where a card sets each capability: (capability, where, field); 0.3 wrote the extended card's at the top
_CAPABILITY_PLACES = (("streaming", "capabilities.", "streaming"),
                      ("pushNotifications", "capabilities.", "pushNotifications"),
                      ("extendedAgentCard", "capabilities.", "extendedAgentCard"),
                      ("extendedAgentCard", "", "supportsAuthenticatedExtendedCard"))


def _stated(data: dict, capabilities: dict) -> dict[str, str]:
    said: dict[str, list[str]] = {}
    for capability, where, name in _CAPABILITY_PLACES:
        holder = capabilities if where else data
        if name in holder:
            value = json.dumps(holder[name])
            said.setdefault(capability, []).append(f"{where}{name}: {value if len(value) <= 40 else '…'}")
    return {capability: " and ".join(words) for capability, words in said.items()}


def _interfaces(data: dict) -> list[Interface]:
    interfaces: list[Interface] = []
    for entry in _list(data.get("supportedInterfaces")):
        if isinstance(entry, dict) and isinstance(entry.get("url"), str):
            interfaces.append(Interface(
                url=entry["url"],
                binding=_str(entry.get("protocolBinding")) or "JSONRPC",
                version=_major_minor(entry.get("protocolVersion")),
                tenant=entry.get("tenant") if isinstance(entry.get("tenant"), str) else None,
            ))
    if isinstance(data.get("url"), str):  # 0.3: url + preferredTransport, then additionalInterfaces
        version = _major_minor(data.get("protocolVersion"))  # none: a card of 0.2 or before, see `Card.before_0_3`
        old = [Interface(url=data["url"], binding=_str(data.get("preferredTransport")) or "JSONRPC",
                         version=version)]
        for entry in _list(data.get("additionalInterfaces")):
            if isinstance(entry, dict) and isinstance(entry.get("url"), str):
                old.append(Interface(url=entry["url"], binding=_str(entry.get("transport")) or "JSONRPC",
                                     version=version))
        known = {(i.url, i.binding.upper(), i.version) for i in interfaces}
        interfaces += [i for i in old if (i.url, i.binding.upper(), i.version) not in known]
    return interfaces


def _skill(data: dict) -> Skill:
    return Skill(id=_str(data.get("id")), name=_str(data.get("name")),
                 input_modes=_strings(data.get("inputModes")), output_modes=_strings(data.get("outputModes")))


def _schemes(data: dict) -> list[SecurityScheme]:
    schemes = []
    for name, value in data.items():
        if not isinstance(value, dict):
            continue
        if "type" in value:  # 0.3, OpenAPI style
            kind = {"apiKey": "apiKey", "http": "http", "oauth2": "oauth2", "openIdConnect": "openIdConnect",
                    "mutualTLS": "mutualTLS"}.get(_str(value.get("type")), _str(value.get("type")))
            schemes.append(SecurityScheme(name=name, kind=kind, location=_opt(value.get("in")),
                                          parameter=_opt(value.get("name")), scheme=_opt(value.get("scheme"))))
            continue
        for key, kind in (("apiKeySecurityScheme", "apiKey"), ("httpAuthSecurityScheme", "http"),
                          ("oauth2SecurityScheme", "oauth2"), ("openIdConnectSecurityScheme", "openIdConnect"),
                          ("mtlsSecurityScheme", "mutualTLS")):
            if isinstance(value.get(key), dict):
                inner = value[key]
                schemes.append(SecurityScheme(name=name, kind=kind, location=_opt(inner.get("location")),
                                              parameter=_opt(inner.get("name")), scheme=_opt(inner.get("scheme"))))
    return schemes


def _requirements(data: dict) -> list[list[str]]:
    result: list[list[str]] = []
    for entry in _list(data.get("securityRequirements")):
        if isinstance(entry, dict):  # 0.3's shape under the 1.0 name (card-schema says so) still names its schemes
            result.append(sorted(_dict(entry.get("schemes")).keys() if "schemes" in entry else entry.keys()))
    if not result:
        for entry in _list(data.get("security")):  # 0.3: [{"scheme": [scopes]}]
            if isinstance(entry, dict):
                result.append(sorted(entry.keys()))
    return result


#: (field, type, required) of a 1.0 card (proto AgentCard, §2.1 of the reference)
_CARD_FIELDS = (
    ("name", str, True), ("description", str, True), ("supportedInterfaces", list, True),
    ("version", str, True), ("capabilities", dict, True), ("defaultInputModes", list, True),
    ("defaultOutputModes", list, True), ("skills", list, True), ("securitySchemes", dict, False),
    ("securityRequirements", list, False), ("signatures", list, False), ("provider", dict, False),
    ("documentationUrl", str, False), ("iconUrl", str, False),
)
_SKILL_FIELDS = (("id", str), ("name", str), ("description", str), ("tags", list))
_INTERFACE_FIELDS = (("url", str), ("protocolBinding", str), ("protocolVersion", str))


#: required fields of a ``url``-shaped card (0.3 and before), per object, with the version that
#: first required each (specification/json/a2a.json at v0.1.0, v0.2.x, v0.3.0): a card without
#: protocolVersion is of 0.1 or 0.2 (0.2.5 made it required), and needs what 0.1 required; what
#: only 0.2 added (`skills[].tags`, ...) a 0.2 client requires and a 0.1 card may lack
REQUIRED_0_X: dict[str, tuple[tuple[str, type, str], ...]] = {
    "": (("name", str, "0.1"), ("url", str, "0.1"), ("version", str, "0.1"), ("capabilities", dict, "0.1"),
         ("skills", list, "0.1"), ("description", str, "0.2"), ("defaultInputModes", list, "0.2"),
         ("defaultOutputModes", list, "0.2")),
    "skills[]": (("id", str, "0.1"), ("name", str, "0.1"), ("description", str, "0.2"), ("tags", list, "0.2")),
    "provider": (("organization", str, "0.1"), ("url", str, "0.2")),
    "additionalInterfaces[]": (("url", str, "0.2"), ("transport", str, "0.2")),
    "signatures[]": (("protected", str, "0.3"), ("signature", str, "0.3")),
}


#: the fields each card shape spells, per object (§2.1 for 1.0, §2.2 for 0.3): a key that is one
#: of these in snake_case is a misspelling, and a client reading the camelCase name finds nothing
CARD_SPELLINGS: dict[str, dict[str, frozenset[str]]] = {
    "1.0": {
        "": frozenset(name for name, _, _ in _CARD_FIELDS),
        "capabilities": frozenset({"streaming", "pushNotifications", "extensions", "extendedAgentCard"}),
        "skills[]": frozenset({"id", "name", "description", "tags", "examples", "inputModes", "outputModes",
                               "securityRequirements"}),
        "supportedInterfaces[]": frozenset({"url", "protocolBinding", "protocolVersion", "tenant"}),
        "provider": frozenset({"url", "organization"}),
    },
    "0.3": {
        "": frozenset({"protocolVersion", "name", "description", "url", "preferredTransport", "additionalInterfaces",
                       "iconUrl", "provider", "version", "documentationUrl", "capabilities", "securitySchemes",
                       "security", "defaultInputModes", "defaultOutputModes", "skills",
                       "supportsAuthenticatedExtendedCard", "signatures"}),
        "capabilities": frozenset({"streaming", "pushNotifications", "stateTransitionHistory", "extensions"}),
        "skills[]": frozenset({"id", "name", "description", "tags", "examples", "inputModes", "outputModes",
                               "security"}),
        "additionalInterfaces[]": frozenset({"url", "transport"}),
        "provider": frozenset({"url", "organization"}),
    },
}
#: a2a-sdk's hybrid cards carry both shapes' fields
CARD_SPELLINGS["both"] = {place: CARD_SPELLINGS["1.0"].get(place, frozenset())
                          | CARD_SPELLINGS["0.3"].get(place, frozenset())
                          for place in dict.fromkeys([*CARD_SPELLINGS["1.0"], *CARD_SPELLINGS["0.3"]])}


def schema_problems(data: dict, shape: str = "1.0") -> list[str]:
    """Where a card breaks its version's shape: misspelled fields, and missing or mistyped required
    fields (any version: a ``url``-shaped card by its protocolVersion); for 1.0 (and hybrid) cards
    also 0.3's `security` shape under 1.0's `securityRequirements`."""
    misspelled = list(misspellings(data, shape))
    version = {"both": "1.0 and 0.3", "0.3": "0.3" if "protocolVersion" in data else "0.2"}.get(shape, shape)
    problems = [f"fields in snake_case, which A2A {version} spells in camelCase (a client finds none of them): "
                + ", ".join(f"`{where}{key}` for `{camel}`" for where, key, camel in misspelled)] if misspelled else []
    if shape == "0.3":
        return problems + list(_missing_0_x(data, {(where, camel) for where, _, camel in misspelled}))
    misspelled_here = {camel for where, _, camel in misspelled if not where}
    for name, kind, required in _CARD_FIELDS:
        if name not in data:
            if required and name not in misspelled_here:
                problems.append(f"missing required field `{name}`")
        elif not isinstance(data[name], kind):
            problems.append(f"`{name}` should be a {kind.__name__}")
    for index, skill in enumerate(_list(data.get("skills"))):
        for name, kind in _SKILL_FIELDS:
            if not isinstance(_dict(skill).get(name), kind):
                problems.append(f"`skills[{index}].{name}` is missing or not a {kind.__name__}")
    for index, interface in enumerate(_list(data.get("supportedInterfaces"))):
        for name, kind in _INTERFACE_FIELDS:
            if not isinstance(_dict(interface).get(name), kind):
                problems.append(f"`supportedInterfaces[{index}].{name}` is missing or not a {kind.__name__}")
    for index, entry in enumerate(_list(data.get("securityRequirements"))):
        if isinstance(entry, dict) and "schemes" not in entry and entry:
            problems.append(f"`securityRequirements[{index}]` has 0.3's `security` shape; 1.0 writes "
                            f"{{\"schemes\": {{\"{next(iter(entry))}\": {{\"list\": [...]}}}}}}")
    return problems


def _missing_0_x(data: dict, misspelled: set[tuple[str, str]]):
    """Required fields a ``url``-shaped card lacks (or has of another type), by its protocolVersion;
    one without is judged as 0.1 (a field 0.2 added is named as such). A misspelled field is told
    its spelling instead."""
    declared = _major_minor(data.get("protocolVersion"))
    version = declared or "0.1"
    for place, fields in REQUIRED_0_X.items():
        for prefix, value in _objects(data, place):
            value = _dict(value)
            for field, kind, since in fields:
                if isinstance(value.get(field), kind) or (prefix, field) in misspelled:
                    continue
                where = f"`{prefix}{field}` is missing or not a {kind.__name__}"
                if not _before(version, _version_tuple(since)):
                    yield where
                elif since == "0.2" and declared is None:
                    yield f"{where}, which A2A 0.2 requires (0.1 did not): a 0.2 client refuses this card"


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def misspellings(data: dict, shape: str):
    """(where, key, field) for each key that is a field of the card's version in snake_case
    (`default_input_modes` for `defaultInputModes`): proto or pydantic field names served
    without their JSON names."""
    spellings = CARD_SPELLINGS.get(shape, CARD_SPELLINGS["1.0"])
    for place, known in spellings.items():
        for prefix, value in _objects(data, place):
            for key in _dict(value):
                if "_" in key and key not in known and (camel := _camel(key)) in known:
                    yield prefix, key, camel


def _objects(data: dict, place: str) -> list[tuple[str, object]]:
    """(where, object) for each object a place of the card tables names: the card itself (""),
    each item of a list ("skills[]"), or a member ("provider"); an absent member names none."""
    name, many, _ = place.partition("[]")
    if not name:
        return [("", data)]
    if many:
        return [(f"{name}[{index}].", item) for index, item in enumerate(_list(data.get(name)))]
    return [(f"{name}.", data[name])] if name in data else []


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def split_url(url: str):
    """urlsplit that never raises: a malformed IPv6 host (from a hostile card or Host header) is
    read with its brackets escaped, a host that names nothing."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number or past 65535
        return parts
    except ValueError:
        return urlsplit(url.replace("[", "%5B").replace("]", "%5D"))


def _with_scheme(url: str) -> str:
    """A gRPC interface's `host:port` (§5.6 on main) read as a URL; other URLs as they are."""
    return url if "://" in url else f"http://{url}"


@lru_cache(maxsize=4096)  # rules ask for the same few interfaces' URLs on every call
def _url_paths(url: str) -> tuple[str, str]:
    return split_url(url).path, split_url(_with_scheme(url)).path.rstrip("/")


@lru_cache(maxsize=4096)
def url_origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a URL or of a gRPC `host:port` (read as http)."""
    parts = split_url(_with_scheme(url))
    scheme = (parts.scheme or "http").lower()
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        port = 443 if scheme == "https" else 80
    return scheme, (parts.hostname or "").lower(), port


def _major_minor(value: object) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    parts = value.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else value


def _before(version: str, other: tuple[int, ...]) -> bool:
    try:
        return tuple(int(part) for part in version.split(".")) < other
    except ValueError:
        return False


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list:
    return value if isinstance(value, list) else []


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _opt(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _strings(value: object) -> list[str]:
    return [item for item in _list(value) if isinstance(item, str)]

