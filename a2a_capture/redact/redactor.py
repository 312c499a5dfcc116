"""Replace what the policy calls secret by markers: in headers, targets, bodies and free text.

A marker says what was removed and carries a short keyed hash, so equal secrets stay
recognisable within a session (the same token on two calls) while the value itself cannot be
recovered or guessed offline without the session key. Bodies keep their own bytes: each secret
is replaced where it stands (a JSON string token, a form value, a span of text), so a compact
body stays compact and a pretty one pretty. Every body is looked at, whatever its type says:
JSON is sniffed, form bodies and text are scanned, SSE frames are read frame by frame (their
`data:` lines joined), and a compressed body is decoded first.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import re
import secrets
from urllib.parse import quote_plus, unquote_plus

from a2a_capture import nesting
from a2a_capture.capture.body import FileBody, Spill, pieces, whole
from a2a_capture.redact import names
from a2a_capture.redact.policy import Policy, active
from a2a_capture.redact.scanner import MARKER, Scanner

#: schemes kept in clear before their credentials (`Bearer [redacted: …]` still says how the client authenticated)
SCHEMES = frozenset({"bearer", "basic", "digest", "token", "negotiate", "ntlm", "hoba", "mutual", "dpop", "mac",
                     "oauth", "apikey", "aws4-hmac-sha256", "gnap", "privatetoken", "vapid"})
#: cookie attributes, which are no secret
_COOKIE_ATTRIBUTES = frozenset({"path", "domain", "expires", "max-age", "samesite", "secure", "httponly",
                                "partitioned", "priority"})
_SCHEME_VALUE = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9-]*)(?P<gap>\s+)(?P<rest>\S.*)$", re.DOTALL)
#: a JSON string token in raw bytes (they hold no raw line break), and whether a `:` makes it a member name
_STRING_TOKEN = re.compile(rb'"(?:[^"\\\r\n]|\\.)*"(?P<colon>\s*:)?')
_FORM = re.compile(r"[\w.~%+*-]+=[^&\s]*(?:&[\w.~%+*-]+=[^&\s]*)*")
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
#: an object of one of these types is an API key scheme: its `value` is the key
#: how much of a stream kept in its file is masked at once: its frames, parsed, take some 30 times that
_WINDOW = 1 << 18
_APIKEY_TYPES = frozenset({"apikey", "api-key", "api_key", "apiKey", "APIKEY", "API_KEY"})


class Redactor:
    """Redacts with one key per session, so markers match within it and nowhere else."""

    def __init__(self, key: bytes | None = None, policy: Policy | None = None) -> None:
        self.key = key or secrets.token_bytes(16)
        self.policy = policy or active()
        self.scanner = Scanner(self.policy)
        #: (place, kind) of every secret replaced, for `scan`; the caller empties it
        self.found: list[tuple[str, str]] = []
        self._shapes: list | None = None  # while a JSON body is walked: the shapes its bytes could hold

    def digest(self, value: str) -> str:
        return hmac.new(self.key, value.encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()[:6]

    def marker(self, what: str, value: str) -> str:
        return f"[redacted: {what}, sha256:{self.digest(value)}]"

    def _note(self, place: str, kind: str) -> str:
        self.found.append((place, kind))
        return place

    # -- free text ---------------------------------------------------------------------------

    def text(self, text: str, *, lines: bool = False, shapes: list | None = None) -> tuple[str, list[str]]:
        """``text`` with every secret the scanner finds replaced, and the kinds replaced.
        ``lines``: a text body, where `Name: value` lines and `"name": "value"` members count too;
        ``shapes``: only these are tried (the candidates of the body ``text`` is a string of)."""
        found = self.scanner.find(text, lines=lines, only=shapes) if text else []
        if not found:
            return text, []
        pieces, last = [], 0
        for item in found:
            pieces += [text[last:item.start], self.marker(item.kind, text[item.start:item.end])]
            last = item.end
        pieces.append(text[last:])
        return "".join(pieces), [item.kind for item in found]

    def value(self, name: str, value: str) -> str:
        """A secret-named value as a marker; a credential keeps its scheme (`Bearer [redacted: …]`)."""
        match = _SCHEME_VALUE.match(value)
        if match and match.group("scheme").lower() in SCHEMES and not MARKER.match(match.group("rest")):
            scheme = match.group("scheme")
            return f"{scheme}{match.group('gap')}{self.marker(scheme.lower() + ' credentials', match.group('rest'))}"
        return self.marker(name, value)

    # -- headers -----------------------------------------------------------------------------

    def headers(self, headers: list[tuple[str, str]]) -> tuple[list[tuple[str, str]], list[str]]:
        result, removed = [], []
        for name, value in headers:
            if value and not _all_markers(value) and self.policy.secret_name(name, "header"):
                lower = name.lower()
                if lower in ("cookie", "set-cookie"):
                    cleaned = self._cookie(value, lower == "set-cookie")
                else:
                    cleaned = self.value(lower, value)
                if cleaned != value:
                    removed.append(self._note(f"header {name}", lower))
                result.append((name, cleaned))
                continue
            cleaned, kinds = self.text(value)
            if kinds:
                removed.append(f"header {name}")
                self.found += [(f"header {name}", kind) for kind in kinds]
            result.append((name, cleaned))
        return result, removed

    def _cookie(self, value: str, set_cookie: bool) -> str:
        parts = []
        for number, part in enumerate(value.split(";")):
            name, sep, content = part.strip().partition("=")
            attribute = set_cookie and number > 0 and name.lower() in _COOKIE_ATTRIBUTES
            if not sep or attribute or not content or MARKER.fullmatch(content):
                parts.append(part.strip())
            else:
                parts.append(f"{name}={self.marker('cookie ' + name, content)}")
        return "; ".join(parts)

    # -- the request target ------------------------------------------------------------------

    def target(self, target: str) -> tuple[str, list[str]]:
        """A request target with secret query values, and secrets by shape in its path, replaced
        where they stand (the rest of the target keeps its spelling)."""
        path, sep, query = target.partition("?")
        removed: list[str] = []
        found = self.scanner.find(path, pairs="@" in path)
        if found:
            path = self._spliced(path, found, encode=True)
            removed += [self._note("target", item.kind) for item in found]
        if sep and query:
            query, gone = self._pairs(query, "query")
            removed += gone
        return path + sep + query, list(dict.fromkeys(removed))

    def _pairs(self, text: str, place: str) -> tuple[str, list[str]]:
        """`a=b&c=d` with each secret-named value (and any secret by shape) replaced, encoded as a
        form encodes it; ``place`` is `query` or `form`."""
        removed, pieces = [], []
        for piece in re.split(r"(&)", text):
            name, sep, raw = piece.partition("=")
            decoded_name = unquote_plus(name)
            if sep and raw and not _all_markers(unquote_plus(raw)) \
                    and self.policy.secret_name(decoded_name, "query" if place == "query" else "form"):
                value = unquote_plus(raw)
                pieces.append(f"{name}={_encoded(self.marker(f'{place} {decoded_name}', value))}")
                removed.append(self._note(f"{place} {decoded_name}", f"{place} {decoded_name}"))
                continue
            found = self.scanner.find(unquote_plus(raw), pairs=False) if sep and raw else []
            if found:
                value = self._spliced(unquote_plus(raw), found, encode=False)
                pieces.append(f"{name}={_encoded(value)}")
                removed += [self._note(f"{place} {decoded_name}", item.kind) for item in found]
                continue
            pieces.append(piece)
        return "".join(pieces), removed

    def _spliced(self, text: str, found, *, encode: bool) -> str:
        pieces, last = [], 0
        for item in found:
            marker = self.marker(item.kind, text[item.start:item.end])
            pieces += [text[last:item.start], marker.replace(" ", "+") if encode else marker]
            last = item.end
        pieces.append(text[last:])
        return "".join(pieces)

    # -- bodies ------------------------------------------------------------------------------

    def message(self, headers: list[tuple[str, str]], body: bytes | FileBody,
                notes: list[str]) -> tuple[list[tuple[str, str]], bytes | FileBody, list[str]]:
        """A message's body redacted: a compressed one is decoded first and kept decoded if a
        secret was in it; one that does not decode as its `Content-Encoding` says is masked
        whole. A stream kept in its file (capture/body.py) is masked a window of frames at a
        time into a file of its own. ``notes`` gets what the capture should say about it."""
        if not body:
            return headers, body, []
        encoding = next((value for name, value in headers if name.lower() == "content-encoding"), "")
        content_type = _content_type(headers)
        codings = [part.strip().lower() for part in encoding.split(",") if part.strip()]
        if not codings or all(coding == "identity" for coding in codings):
            if isinstance(body, FileBody) and _is_stream(body, content_type):
                return (headers, *self._kept_stream(body, notes))
            body, removed = self.body(whole(body), content_type, notes)
            return headers, body, removed
        body = whole(body)
        from a2a_capture.capture.encoding import decode_content

        plain = [(n, v) for n, v in headers if n.lower() != "content-encoding"]
        decoded = decode_content(body, encoding)
        if decoded is body:  # not what its label says (or too large to decode): nothing in it can be seen
            if MARKER.fullmatch(body.decode("utf-8", "replace")):
                return headers, body, []
            notes.append(f"a2a-capture could not decode this body as {encoding}, as its Content-Encoding says, "
                         "so it masked the body whole")
            place = self._note(f"body (not {encoding} as labelled)", "undecodable body")
            return plain, self.marker(f"body not {encoding}", body.decode("latin-1")).encode(), [place]
        cleaned, removed = self.body(decoded, content_type, notes)
        if not removed:
            return headers, body, []
        notes.append(f"a2a-capture decoded this {encoding} body to redact it; it is written uncompressed")
        return plain, cleaned, removed

    def body(self, body: bytes, content_type: str, notes: list[str] | None = None) -> tuple[bytes, list[str]]:
        """A decoded body with its secrets replaced in place, and the places replaced."""
        if not body:
            return body, []
        notes = notes if notes is not None else []
        if _is_stream(body, content_type):
            return self._stream(body, notes)
        head = body.lstrip(b" \t\r\n\xef\xbb\xbf")[:1]
        if head in (b"{", b"["):
            try:
                document = nesting.loads(body)
            except (ValueError, UnicodeDecodeError):
                document = None
            else:
                return self._json(body, [document], notes)
        text = body.decode("utf-8", "surrogateescape")
        if content_type in _FORM_TYPES[:1] or (content_type not in ("text/plain",) and _FORM.fullmatch(text.strip())):
            stripped = text.strip()
            at = text.find(stripped)
            cleaned, removed = self._pairs(stripped, "form")
            if removed:
                return (text[:at] + cleaned + text[at + len(stripped):]).encode("utf-8", "surrogateescape"), \
                    list(dict.fromkeys(removed))
            return body, []
        cleaned, kinds = self.text(text, lines=True)
        if not kinds:
            return body, []
        self.found += [("body text", kind) for kind in kinds]
        return cleaned.encode("utf-8", "surrogateescape"), [f"body text ({', '.join(dict.fromkeys(kinds))})"]

    def _kept_stream(self, body: FileBody, notes: list[str],
                     piece: int = _WINDOW) -> tuple[bytes | FileBody, list[str]]:
        """A stream too long to hold, masked as ``_stream`` masks one, a window of whole frames at a
        time (memory: a window and its longest frame), written to a file of its own; the body as it
        was when nothing in it is secret. Each value is masked where the policy finds it in its
        window's frames; a note said of several windows is said once."""
        spill, changed, removed, said = Spill(), False, {}, len(notes)
        start, held = spill.start(), b""
        for part in itertools.chain(pieces(body, piece), [None]):  # None: the end, where the rest is the last frame
            held = held + part if part is not None else held
            cut = _last_frame_end(held) if part is not None else len(held)
            if not cut:
                continue
            frames, held = held[:cut], held[cut:]
            cleaned, gone = self._stream(frames, notes)
            changed = changed or cleaned is not frames
            removed.update(dict.fromkeys(gone))
            spill.write(cleaned)
        notes[said:] = dict.fromkeys(notes[said:])
        return (spill.body(start), list(removed)) if changed else (body, [])

    def _stream(self, body: bytes, notes: list[str]) -> tuple[bytes, list[str]]:
        """SSE: each frame's data (its `data:` lines joined) read as JSON where it is JSON, the
        other lines scanned as text."""
        documents, others = [], []
        for frame in re.split(rb"\r\n\r\n|\n\n|\r\r", body):
            data = [line[5:].removeprefix(b" ") for line in frame.splitlines() if line.startswith(b"data:")]
            if not data:
                continue
            joined = b"\n".join(data)
            try:
                documents.append(nesting.loads(joined))
            except (ValueError, UnicodeDecodeError):
                others.append(joined)
        cleaned, removed = self._json(body, documents, notes) if documents else (body, [])
        if others:  # frames that are not JSON: their lines scanned as text, each where it stands
            lines = {line for other in others for line in other.decode("utf-8", "surrogateescape").split("\n")}
            text, kinds = cleaned.decode("utf-8", "surrogateescape"), []
            for line in sorted(lines, key=len, reverse=True):
                new, found = self.text(line)
                if found:
                    text, kinds = text.replace(line, new), kinds + found
            if kinds:
                self.found += [("body text", kind) for kind in kinds]
                cleaned = text.encode("utf-8", "surrogateescape")
                removed.append(f"body text ({', '.join(dict.fromkeys(kinds))})")
        return cleaned, removed

    def _json(self, body: bytes, documents: list, notes: list[str]) -> tuple[bytes, list[str]]:
        """Each changed JSON string replaced where it stands in the raw bytes (member names never);
        a string written with escapes and changed only in part is written again, with a note."""
        changes: dict[str, str] = {}
        self._shapes = self.scanner.candidates(body)  # looked for once in the body, not in each string
        try:
            for document in documents:
                self._walk(document, "$", changes)
        finally:
            self._shapes = None
        if not changes:
            return body, []
        rewritten: list[str] = []

        def replace(match: re.Match) -> bytes:
            token = match.group(0)
            if match.group("colon") is not None:
                return token
            raw = token[1:-1]
            if b"\\" in raw:
                try:
                    value = json.loads(token)
                except ValueError:
                    return token
            else:
                value = raw.decode("utf-8", "surrogateescape")
            new = changes.get(value)
            if new is None:
                return token
            if b"\\" in raw and not MARKER.fullmatch(new):
                rewritten.append(value)
            return json.dumps(new, ensure_ascii=False).encode("utf-8", "surrogateescape")

        cleaned = _STRING_TOKEN.sub(replace, body)
        places: dict[str, None] = {}
        for document in documents:
            _places(document, "$", changes, places)
        removed = [f"body {place}" for place in places]
        if rewritten:
            notes.append("a2a-capture wrote again, without their escapes, the JSON strings it redacted in part "
                         f"at {', '.join(places)}; the rest of the body is as it travelled")
        return cleaned, removed

    def document(self, value, path: str = "$"):
        """A parsed JSON document (or a protobuf Struct as a dict) with its secrets replaced, and the
        paths replaced; ``value`` itself is left as it is."""
        changes: dict[str, str] = {}
        self._walk(value, path, changes)
        if not changes:
            return value, []
        places: dict[str, None] = {}
        _places(value, path, changes, places)
        return _replaced(value, changes), list(places)

    def _walk(self, value, path: str, changes: dict[str, str]) -> None:
        """Collect ``changes`` (old string -> new) for every secret at any depth: members by
        name, strings by shape."""
        if isinstance(value, dict):
            oauth = not names.OAUTH_MEMBERS.isdisjoint(value)
            within = "oauth" if oauth else "json"
            jws = "protected" in value and "signature" in value  # a signed card's JWS: public
            kind, pair_name = value.get("type"), value.get("name")
            named_value = (isinstance(kind, str) and kind in _APIKEY_TYPES) or \
                (isinstance(pair_name, str) and self.policy.secret_name(pair_name, "header"))
            for key, child in value.items():
                where = f"{path}.{key}"
                secret = (self.policy.secret_name(key, within) and not (jws and key == "signature")) \
                    or (named_value and key == "value")
                if isinstance(child, str):
                    if secret and child and not _all_markers(child):
                        self._change(changes, child, self.value(key, child), where, key)
                    else:
                        self._scan_string(child, changes, where)
                elif secret and isinstance(child, list) and all(isinstance(item, str) for item in child):
                    for item in child:
                        if item and not _all_markers(item):
                            self._change(changes, item, self.value(key, item), where, key)
                elif isinstance(child, (dict, list)):
                    self._walk(child, where, changes)
        elif isinstance(value, list):
            for child in value:
                if isinstance(child, str):
                    self._scan_string(child, changes, f"{path}[]")
                else:
                    self._walk(child, f"{path}[]", changes)
        elif isinstance(value, str):
            self._scan_string(value, changes, path)

    def _scan_string(self, text: str, changes: dict[str, str], where: str) -> None:
        if len(text) < 6 or text in changes:
            return
        new, kinds = self.text(text, shapes=self._shapes)
        if kinds:
            for kind in kinds:
                self._change(changes, text, new, where, kind)

    def _change(self, changes: dict[str, str], old: str, new: str, where: str, kind: str) -> None:
        changes.setdefault(old, new)
        self.found.append((f"body {where}", kind))


def _places(value, path: str, changes: dict[str, str], places: dict[str, None]) -> None:
    """The path of every string the replacement changed (a secret quoted elsewhere too)."""
    if isinstance(value, dict):
        for key, child in value.items():
            if isinstance(child, str):
                if child in changes:
                    places[f"{path}.{key}"] = None
            else:
                _places(child, f"{path}.{key}", changes, places)
    elif isinstance(value, list):
        for child in value:
            if isinstance(child, str):
                if child in changes:
                    places[f"{path}[]"] = None
            else:
                _places(child, f"{path}[]", changes, places)
    elif isinstance(value, str) and value in changes:
        places[path] = None


def _replaced(value, changes: dict[str, str]):
    if isinstance(value, dict):
        return {key: _replaced(child, changes) for key, child in value.items()}
    if isinstance(value, list):
        return [_replaced(child, changes) for child in value]
    if isinstance(value, str):
        return changes.get(value, value)
    return value


def _all_markers(value: str) -> bool:
    """A value that is one marker, or a scheme and a marker: redacted already."""
    if "[redacted:" not in value:
        return False
    rest = MARKER.sub("", value).strip()
    return not rest or (rest.lower() in SCHEMES and bool(MARKER.search(value)))


def _encoded(value: str) -> str:
    return quote_plus(value, safe="[]:,")


def _content_type(headers: list[tuple[str, str]]) -> str:
    for name, value in headers:
        if name.lower() == "content-type":
            return value.split(";")[0].strip().lower()
    return ""


#: where SSE frames end (the separators ``Redactor._stream`` splits a stream at)
_FRAME_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")


def _is_stream(body: bytes | FileBody, content_type: str) -> bool:
    if content_type == "text/event-stream":
        return True
    start = body if isinstance(body, bytes) else body.part(0, 1024).read()
    return not content_type and start.lstrip()[:5] in (b"data:", b"event")


def _last_frame_end(held: bytes) -> int:
    """Where the last frame separator in ``held`` ends, 0 when none is surely whole: one that ends in
    the last three bytes may be the start of a longer one (``\r\n\r`` and then ``\n``). ``held``
    starts where a frame starts, so the separators found are those a scan of the whole body finds."""
    end = 0
    for match in _FRAME_END.finditer(held):
        if match.end() <= len(held) - 3:
            end = match.end()
    return end
