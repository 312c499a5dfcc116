"""HTTP+JSON calls: the route, its operation and version, its body and its answer."""

from __future__ import annotations

from a2a_capture.a2a import spec
from a2a_capture.a2a.answers import read_error
from a2a_capture.a2a.call import Call
from a2a_capture.a2a.payloads import StreamFacts, read_message, read_results


def read_rest(call: Call, stream: StreamFacts | None) -> bool:
    match = rest_route(call.method, call.path)
    if match is None:
        return False
    route, found, base = match
    call.kind, call.binding = "rest", "HTTP+JSON"
    call.operation, call.spelled_version, call.base_path = route.operation, route.version, base
    call.task_id = found.get("id")
    if isinstance(call.request_json, dict):
        call.params = call.request_json
        read_message(call, call.request_json)
    call.params = {**call.params, **{key: values[-1] for key, values in call.query.items()}}
    read_error(call)
    read_results(call, call.response_json, stream)
    return True


def rest_route(method: str, path: str, bases: list[str] | None = None):
    """(route, its placeholders, the base path before it) for a REST path, or None.

    With ``bases`` (interface paths from a card) the route must follow one of them, maybe
    after a tenant segment; without, the longest route that ends the path wins.
    """
    path = path.rstrip("/") or "/"
    candidates = []
    for route in spec.ROUTES:
        text, at_end = route.needs
        if not (path.endswith(text) if at_end else text in path):
            continue  # the regex cannot find this route here
        found = route.regex.search(path)
        if found is None:
            continue
        base = path[:found.start()]
        candidates.append((len(route.pattern), route, found.groupdict(), base))
    if bases is not None:
        candidates = [c for c in candidates if _base_matches(c[3], bases)]
    if not candidates:
        return None
    verb_ok = [c for c in candidates if method in c[1].verbs]
    if not verb_ok:
        # the wrong verb on a route with its own suffix (`:subscribe`, `/pushNotificationConfigs`) is
        # still that operation; on a route that ends in a placeholder (`/tasks/{id}`) the path only
        # looks like it: `POST /tasks/send` is no GetTask
        verb_ok = [c for c in candidates if not c[1].pattern.endswith("}")]
        if not verb_ok:
            return None
    _, route, groups, base = max(verb_ok, key=lambda c: c[0])
    return route, groups, base


def _base_matches(base: str, bases: list[str]) -> bool:
    base = base.rstrip("/")
    for known in bases:
        known = known.rstrip("/")
        if base == known or (base.startswith(known + "/") and base[len(known) + 1:].count("/") == 0):
            return True  # the interface path, maybe followed by one tenant segment
    return False
