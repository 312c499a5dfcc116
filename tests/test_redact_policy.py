"""The redaction policy: names by their words, values by shape, every kind of body, markers exact."""

from __future__ import annotations

import gzip
import json

import pytest

from a2a_capture.redact import DEFAULT, MARKER, Policy, PolicyError, Redactor, load

SECRET_NAMES = [
    "Authorization", "X-Authorization", "Authentication", "Proxy-Authorization", "X-Goog-Iap-Jwt-Assertion",
    "X-Forwarded-Access-Token", "X-Hub-Signature-256", "X-A2A-Notification-Token", "X-Api-Key", "Cookie",
    "client_secret", "id_token", "refresh_token", "X-Amz-Signature", "refreshToken", "bearerToken", "privateKey",
    "Token", "API_KEY", "apikey", "accesstoken", "access_token", "password", "passwd", "credentials", "sig",
    "X-CSRF-Token", "client_assertion", "code_verifier", "token_value", "X-Session",
]
KEPT_NAMES = [
    "tokenCount", "keyword", "maxTokens", "tokenUrl", "taskId", "pageToken", "nextPageToken", "token_type",
    "bearerFormat", "publicKey", "Idempotency-Key", "Access-Control-Allow-Credentials", "WWW-Authenticate",
    "Content-Type", "keys", "keyId", "authorizationUrl", "sessionId", "code", "monkey",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_names_by_their_words(name):
    assert DEFAULT.secret_name(name, "json"), name


@pytest.mark.parametrize("name", KEPT_NAMES)
def test_near_miss_names_stay_readable(name):
    assert not DEFAULT.secret_name(name, "json"), name


def test_code_is_secret_in_queries_forms_and_oauth_objects_only():
    assert DEFAULT.secret_name("code", "query") and DEFAULT.secret_name("code", "form")
    assert DEFAULT.secret_name("code", "oauth") and not DEFAULT.secret_name("code", "json")
    body = b'{"grant_type": "authorization_code", "code": "oauth-code-1"}'
    assert b"oauth-code-1" not in Redactor(b"k").body(body, "application/json")[0]
    assert Redactor(b"k").body(b'{"error": {"code": "NOT_FOUND"}}', "application/json")[1] == []


def _masked(body: bytes, content_type: str = "application/json", key: bytes = b"k") -> tuple[bytes, list[str]]:
    return Redactor(key).body(body, content_type)


def test_members_at_any_depth_and_values_by_shape_inside_strings():
    body = json.dumps({"params": {
        "configuration": {"taskPushNotificationConfig": {
            "url": "http://hook:userinfo-secret@127.0.0.1:9/hooks?token=query-secret&x=1", "token": "push-secret"}},
        "message": {"metadata": {"Authorization": "Bearer nested-bearer-secret", "tokenCount": 12, "keyword": "k",
                                 "note": "call https://idp/cb?client_secret=card-secret"}}}}).encode()
    masked, places = _masked(body)
    for secret in (b"userinfo-secret", b"query-secret", b"push-secret", b"nested-bearer-secret", b"card-secret"):
        assert secret not in masked
    data = json.loads(masked)
    metadata = data["params"]["message"]["metadata"]
    assert metadata["tokenCount"] == 12 and metadata["keyword"] == "k"
    assert metadata["Authorization"].startswith("Bearer [redacted: bearer credentials, sha256:")
    url = data["params"]["configuration"]["taskPushNotificationConfig"]["url"]
    assert url.startswith("http://hook:[redacted: url password, sha256:") and url.endswith("&x=1")
    assert places == ["body $.params.configuration.taskPushNotificationConfig.url",
                      "body $.params.configuration.taskPushNotificationConfig.token",
                      "body $.params.message.metadata.Authorization", "body $.params.message.metadata.note"]


def test_only_the_secret_bytes_change():
    body = b'{\n  "a": 1,\n  "token":"t-1",   "b": [ "x" ]\n}\n'
    masked, _ = _masked(body)
    start = body.index(b'"t-1"')
    assert masked[:start] == body[:start] and masked.endswith(body[start + 5:])


def test_escaped_strings_are_found_and_replaced_in_the_exact_bytes():
    body = b'{"token": "SEC\\/X\\u0041", "other": "SEC/XA"}'
    masked, places = _masked(body)
    assert b"SEC" not in masked and b"\\u0041" not in masked
    assert places == ["body $.token", "body $.other"]  # the same secret quoted elsewhere is replaced too


def test_a_string_with_escapes_changed_in_part_is_written_again_with_a_note():
    body = b'{"url": "http:\\/\\/h\\/cb?token=abc123456", "n": "\\u00e9"}'
    notes: list[str] = []
    masked, _ = Redactor(b"k").body(body, "application/json", notes)
    assert b"abc123456" not in masked and b'"n": "\\u00e9"' in masked
    assert notes and "wrote again" in notes[0] and "$.url" in notes[0]


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "text/plain", ""])
def test_json_is_sniffed_whatever_the_content_type(content_type):
    body = b'{"jsonrpc": "2.0", "method": "SendMessage", "params": {"apiKey": "sniffed-secret"}}'
    assert b"sniffed-secret" not in _masked(body, content_type)[0]


def test_form_bodies_mask_secret_fields_where_they_stand():
    body = b"grant_type=refresh_token&refresh_token=rt-secret&client_id=app&client_secret=cs-secret&scope=a+b"
    masked, places = _masked(body, "application/x-www-form-urlencoded")
    assert b"rt-secret" not in masked and b"cs-secret" not in masked
    assert masked.startswith(b"grant_type=refresh_token&refresh_token=[redacted:+form+refresh_token,+sha256:")
    assert masked.endswith(b"&client_id=app&client_secret=" + masked.rsplit(b"client_secret=", 1)[1].split(b"&")[0]
                           + b"&scope=a+b")
    assert places == ["form refresh_token", "form client_secret"]


def test_text_bodies_are_scanned():
    body = b"ok, use Authorization: Bearer text-bearer-secret-1\npassword=hunter2hunter\nX-Api-Key: keykey-1\n"
    masked, places = _masked(body, "text/plain")
    for secret in (b"text-bearer-secret-1", b"hunter2hunter", b"keykey-1"):
        assert secret not in masked
    assert places and places[0].startswith("body text (")


def test_sse_frames_over_several_data_lines():
    body = (b'data: {"result": {"task": {"id": "t-1"},\ndata:  "metadata": {"refresh_token": "sse-secret"}}}\n\n'
            b"data: plain text with token=sse-text-secret\n\n")
    masked, places = _masked(body, "text/event-stream")
    assert b"sse-secret" not in masked and b"sse-text-secret" not in masked
    assert masked.count(b"\ndata:") == 2 and b'"id": "t-1"' in masked
    assert "body $.result.metadata.refresh_token" in places


def test_compressed_bodies_are_decoded_and_a_body_that_is_not_what_its_label_says_is_masked_whole():
    redactor = Redactor(b"k")
    notes: list[str] = []
    headers = [("Content-Type", "application/json"), ("Content-Encoding", "gzip")]
    plain, body, places = redactor.message(headers, gzip.compress(b'{"token": "gz-secret"}'), notes)
    assert b"gz-secret" not in body and json.loads(body)["token"].startswith("[redacted: token")
    assert ("Content-Encoding", "gzip") not in plain and "decoded this gzip body" in notes[0]
    untouched = gzip.compress(b'{"ok": true}')
    assert redactor.message(headers, untouched, []) == (headers, untouched, [])
    notes = []
    plain, body, places = redactor.message(headers, b'{"token": "fake-gzip-secret"}', notes)
    assert b"fake-gzip-secret" not in body and MARKER.fullmatch(body.decode())
    assert places == ["body (not gzip as labelled)"] and "could not decode this body as gzip" in notes[0]
    assert redactor.message(plain, body, []) == (plain, body, [])  # masked already: nothing more


def test_headers_keep_schemes_cookie_names_and_readable_neighbours():
    headers, places = Redactor(b"k").headers([
        ("Authorization", "Basic dXNlcjpwYXNz"), ("Cookie", "sid=abc123; theme=dark"),
        ("Set-Cookie", "sid=abc123; Path=/; HttpOnly"), ("WWW-Authenticate", 'Bearer realm="a2a", token="www-1"'),
        ("Location", "https://idp/cb?code=code-1&state=s"), ("A2A-Version", "1.0"), ("Idempotency-Key", "k-1"),
    ])
    values = dict(headers)
    assert values["Authorization"].startswith("Basic [redacted: basic credentials, sha256:")
    assert values["Cookie"].startswith("sid=[redacted: cookie sid, ")
    assert "theme=[redacted: cookie theme" in values["Cookie"]
    assert values["Set-Cookie"].endswith("; Path=/; HttpOnly")
    assert values["WWW-Authenticate"].startswith('Bearer realm="a2a", token="[redacted: query token')
    assert "code-1" not in values["Location"] and values["Location"].endswith("&state=s")
    assert values["A2A-Version"] == "1.0" and values["Idempotency-Key"] == "k-1"
    assert places == ["header Authorization", "header Cookie", "header Set-Cookie", "header WWW-Authenticate",
                      "header Location"]


def test_targets_keep_their_spelling_but_the_secrets():
    target, places = Redactor(b"k").target("/a2a/jsonrpc?b=%2F&client_secret=cs-1&id_token=it-1&code=c-1&page=2")
    assert target.startswith("/a2a/jsonrpc?b=%2F&client_secret=[redacted:+query+client_secret,+sha256:")
    assert target.endswith("&page=2") and " " not in target
    assert places == ["query client_secret", "query id_token", "query code"]
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlLXZhbHVl"
    target, places = Redactor(b"k").target(f"/hooks/{jwt}/events")
    assert jwt not in target and " " not in target and places == ["target"]


def test_masking_twice_changes_nothing():
    redactor = Redactor(b"k")
    body = b'{"token": "t-1", "url": "http://u:p-1@h/?api_key=q-1", "headers": [{"name": "X-Api-Key", "value": "v-1"}]}'
    once, _ = redactor.body(body, "application/json")
    assert redactor.body(once, "application/json") == (once, [])
    headers, _ = redactor.headers([("Authorization", "Bearer abcdef123"), ("Cookie", "a=b")])
    assert redactor.headers(headers) == (headers, [])
    target, _ = redactor.target("/x?token=abc")
    assert redactor.target(target) == (target, [])


def test_equal_secrets_equal_markers_within_a_key_only():
    one, two = Redactor(b"k1"), Redactor(b"k2")
    assert one.marker("token", "s") == one.marker("token", "s") != two.marker("token", "s")


def test_a_signed_cards_jws_signature_is_public():
    card = b'{"name": "a", "signatures": [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c2lnbmF0dXJl"}]}'
    assert _masked(card) == (card, [])


def test_users_extend_the_policy_and_keep_names(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.a2a-capture.redact]\nnames = ["x-tenant-pin", "ssn"]\npatterns = { acme = "acme_[a-z0-9]{8}" }\n'
        'keep = ["x-hub-signature-256"]\n')
    policy = load(tmp_path)
    assert policy.secret_name("X-Tenant-Pin", "header") and policy.secret_name("customerSsn")
    assert not policy.secret_name("X-Hub-Signature-256", "header")
    assert policy.secret_name("Authorization", "header")  # the defaults stay on
    masked, kinds = Redactor(b"k", policy).text("key acme_abcd1234 here")
    assert kinds == ["acme"] and "acme_abcd1234" not in masked
    extended = DEFAULT.extended(("x-pin",), ("zz[0-9]{4}",), ("token",))
    assert extended.secret_name("X-Pin") and not extended.secret_name("token")
    assert Redactor(b"k", extended).text("zz1234")[1] == ["pattern"]


@pytest.mark.parametrize("settings", ['names = "x"', 'patterns = ["("]', "other = 1", "patterns = 3"])
def test_bad_settings_say_what_is_wrong(tmp_path, settings):
    (tmp_path / "pyproject.toml").write_text(f"[tool.a2a-capture.redact]\n{settings}\n")
    with pytest.raises(PolicyError, match=r"pyproject.toml"):
        load(tmp_path)


def test_a_policy_can_be_made_directly():
    assert Policy(names=("pin",)).secret_name("userPin")
