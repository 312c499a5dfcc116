"""card-schema judges a card by the schema of its own version, and names misspelled fields.

Seen on foreign stacks: a2a-server 0.6 serves a 0.2-shaped card whose fields are its pydantic
names (snake_case: `default_input_modes`, `supports_authenticated_extended_card`), and
nodus-a2a-wire serves a 1.0 card whose `securityRequirements` has 0.3's `security` shape. A
client reading those cards as their spec says finds nothing in those fields.
"""

from __future__ import annotations

from a2a_capture.a2a.cards import parse_card
from a2a_capture.analyze.engine import analyze
from tests.builders import ORIGIN, block, card, fetch_card, http_request, http_response, message, rpc, write

#: the card a2a-server 0.6 serves at /.well-known/agent.json (its models dumped without aliases)
SNAKE_0_2 = {
    "name": "Echo", "description": "echoes", "url": f"{ORIGIN}/echo", "version": "1.0.0",
    "capabilities": {"streaming": True, "push_notifications": False, "state_transition_history": False},
    "default_input_modes": ["text/plain"], "default_output_modes": ["text/plain"],
    "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": ["echo"],
                "input_modes": ["text/plain"]}],
    "documentation_url": f"{ORIGIN}/echo/docs", "supports_authenticated_extended_card": True,
}


def _findings(tmp_path, *blocks):
    return {(f.exchange, f.rule): f for f in analyze([write(tmp_path, *blocks)]).findings}


def test_a_snake_case_card_of_0_2_names_each_misspelled_field(tmp_path):
    found = _findings(tmp_path, fetch_card(1, SNAKE_0_2, path="/.well-known/agent.json"))
    assert list(found) == [("1", "card-schema")]  # at agent.json, a 0.2 card is where it belongs
    schema = found[("1", "card-schema")]
    assert (schema.outcome, schema.wasted) == ("advice", False)
    assert schema.message == (
        "the card of Echo: fields in snake_case, which A2A 0.2 spells in camelCase (a client finds none of them): "
        "`default_input_modes` for `defaultInputModes`, `default_output_modes` for `defaultOutputModes`, "
        "`documentation_url` for `documentationUrl`, `supports_authenticated_extended_card` for "
        "`supportsAuthenticatedExtendedCard`, `capabilities.push_notifications` for `pushNotifications`, "
        "`capabilities.state_transition_history` for `stateTransitionHistory`, `skills[0].input_modes` for "
        "`inputModes`")


def test_what_a_misspelled_field_says_is_not_read(tmp_path):
    """The analyzer reads the card as a client that follows the spec does: the snake_case fields
    declare nothing (no extended card, no input modes), the camelCase ones do."""
    snake = parse_card(SNAKE_0_2)
    assert (snake.extended_card, snake.default_input_modes, snake.skills[0].input_modes) == (False, [], [])
    assert snake.streaming


def test_a_0_3_card_is_named_by_its_version_and_a_correct_one_has_no_finding(tmp_path):
    spelled = {**SNAKE_0_2, "protocolVersion": "0.3.0"}
    assert "which A2A 0.3 spells in camelCase" in parse_card(spelled).problems[0]
    correct = {"protocolVersion": "0.3.0", "name": "Echo", "description": "echoes", "url": f"{ORIGIN}/rpc",
               "version": "1.0.0", "capabilities": {"pushNotifications": False, "stateTransitionHistory": True},
               "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
               "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": [], "inputModes": []}],
               "supportsAuthenticatedExtendedCard": False, "security": [{"bearer": []}]}
    assert parse_card(correct).problems == []
    assert _findings(tmp_path, fetch_card(1, correct)) == {}


def test_a_1_0_card_with_a_misspelled_required_field_is_told_the_spelling_not_that_it_is_missing():
    data = card(defaultInputModes=None, default_input_modes=["text/plain"],
                capabilities={"extended_agent_card": True, "stateTransitionHistory": True})
    assert parse_card(data).problems == [
        "fields in snake_case, which A2A 1.0 spells in camelCase (a client finds none of them): "
        "`default_input_modes` for `defaultInputModes`, `capabilities.extended_agent_card` for `extendedAgentCard`"]
    hybrid = card(url=f"{ORIGIN}/rpc", supports_authenticated_extended_card=True)  # a2a-sdk's hybrid shape
    assert parse_card(hybrid).problems == [
        "fields in snake_case, which A2A 1.0 and 0.3 spells in camelCase (a client finds none of them): "
        "`supports_authenticated_extended_card` for `supportsAuthenticatedExtendedCard`"]


#: nodus-a2a-wire's card: a bearer scheme, required in 0.3's shape under 1.0's name
NODUS = card(securitySchemes={"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
             securityRequirements=[{"bearer": []}])


def test_a_1_0_requirement_in_the_0_3_shape_is_flagged_and_still_read(tmp_path):
    """What it requires is plain, so a call without credentials that the agent refuses 401 is the
    waste auth-missing reports; the card is told its requirement's shape."""
    refused = block(2, "SendMessage", http_request("POST", "/rpc", ["Content-Type: application/json",
                                                                    "A2A-Version: 1.0"],
                                                   {"jsonrpc": "2.0", "id": 2, "method": "SendMessage",
                                                    "params": {"message": message()}}),
                    http_response(401, {"error": {"code": "AUTHENTICATION_REQUIRED"}}, reason="Unauthorized"))
    found = _findings(tmp_path, fetch_card(1, NODUS), refused)
    assert set(found) == {("1", "card-schema"), ("2", "auth-missing")}
    assert found[("1", "card-schema")].message == (
        'the card of probe: `securityRequirements[0]` has 0.3\'s `security` shape; 1.0 writes '
        '{"schemes": {"bearer": {"list": [...]}}}')
    assert found[("2", "auth-missing")].wasted


def test_a_1_0_requirement_in_its_own_shape_is_no_finding(tmp_path):
    right = card(securitySchemes=NODUS["securitySchemes"], securityRequirements=[{"schemes": {"bearer": {"list": []}}}])
    found = _findings(tmp_path, fetch_card(1, right),
                      rpc(2, "SendMessage", {"message": message()}, headers=["Content-Type: application/json",
                                                                             "A2A-Version: 1.0",
                                                                             "Authorization: Bearer [redacted]"]))
    assert found == {}


#: the card pya2a (A2A 0.1) serves at /.well-known/agent.json: no protocolVersion, a skill without tags
PYA2A = {"name": "pya2a", "description": "a pya2a agent", "url": f"{ORIGIN}/", "version": "1.0.0",
         "capabilities": {"streaming": True, "pushNotifications": False, "stateTransitionHistory": False},
         "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
         "skills": [{"id": "run", "name": "Run", "description": "Runs the job it is given."}]}
#: a2a-sdk 0.3's and 0.2's cards, as their agents serve them: nothing missing
SDK03 = {"capabilities": {"pushNotifications": False, "streaming": True}, "defaultInputModes": ["text/plain"],
         "defaultOutputModes": ["text/plain"], "description": "an a2a-sdk 0.3 agent", "name": "sdk03",
         "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0",
         "skills": [{"description": "Runs the job it is given.", "id": "run", "name": "Run", "tags": ["test"]}],
         "url": f"{ORIGIN}/", "version": "1.0.0"}


def test_a_card_of_0_2_or_before_is_told_what_0_2_requires_and_0_1_did_not(tmp_path):
    """Without protocolVersion a card is of 0.1 or 0.2: what 0.1 required is required; what 0.2 added
    (skills[].tags: a2a-sdk 0.2's client refuses pya2a's card for it) is named with the version."""
    assert parse_card(PYA2A).problems == [
        "`skills[0].tags` is missing or not a list, which A2A 0.2 requires (0.1 did not): a 0.2 client refuses "
        "this card"]
    found = _findings(tmp_path, fetch_card(1, PYA2A, path="/.well-known/agent.json"))
    assert list(found) == [("1", "card-schema")] and found[("1", "card-schema")].outcome == "advice"
    bare = {key: value for key, value in PYA2A.items() if key not in ("url", "description")}
    assert parse_card({**bare, "preferredTransport": "JSONRPC"}).problems == [
        "`url` is missing or not a str",
        "`description` is missing or not a str, which A2A 0.2 requires (0.1 did not): a 0.2 client refuses this card",
        "`skills[0].tags` is missing or not a list, which A2A 0.2 requires (0.1 did not): a 0.2 client refuses "
        "this card"]


def test_a_0_3_or_0_2_card_is_told_each_required_field_it_lacks(tmp_path):
    assert parse_card(SDK03).problems == [] and _findings(tmp_path, fetch_card(1, SDK03)) == {}
    assert parse_card({**SDK03, "protocolVersion": "0.2.6"}).problems == []
    lacking = {**PYA2A, "protocolVersion": "0.3.0", "provider": {"organization": "Example"},
               "additionalInterfaces": [{"url": f"{ORIGIN}/grpc"}], "signatures": [{"protected": "eyJ9"}]}
    del lacking["defaultOutputModes"]
    assert parse_card(lacking).problems == [
        "`defaultOutputModes` is missing or not a list", "`skills[0].tags` is missing or not a list",
        "`provider.url` is missing or not a str", "`additionalInterfaces[0].transport` is missing or not a str",
        "`signatures[0].signature` is missing or not a str"]
    found = _findings(tmp_path, fetch_card(1, lacking))
    assert found[("1", "card-schema")].message.startswith(
        "the card of pya2a: `defaultOutputModes` is missing or not a list; `skills[0].tags` is missing")
    assert found[("1", "card-schema")].message.endswith("(and 2 more)")


def test_a_0_3_card_with_a_misspelled_required_field_is_told_the_spelling_not_that_it_is_missing():
    spelled = {**SDK03, "default_input_modes": ["text/plain"],
               "skills": [{"description": "d", "id": "run", "name": "Run", "tag_s": [], "tags": None}]}
    del spelled["defaultInputModes"]
    assert parse_card(spelled).problems == [
        "fields in snake_case, which A2A 0.3 spells in camelCase (a client finds none of them): "
        "`default_input_modes` for `defaultInputModes`", "`skills[0].tags` is missing or not a list"]
