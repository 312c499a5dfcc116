"""The policy's value shapes against detect-secrets' own plugins, the source of its prefix table."""

from __future__ import annotations

import random
import string

import pytest
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

from a2a_capture.redact import DEFAULT, Redactor, Scanner
from a2a_capture.redact.shapes import SHAPES

_rng = random.Random(27)


def _chars(alphabet: str, count: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(count))


ALNUM = string.ascii_letters + string.digits
LOWER = string.ascii_lowercase + string.digits

#: for each detect-secrets plugin the table adopts, secrets that plugin flags
SAMPLES = {
    "AWSKeyDetector": ["AKIA" + _chars(string.ascii_uppercase + string.digits, 16),
                       "ASIA" + _chars(string.ascii_uppercase + string.digits, 16)],
    "AzureStorageKeyDetector": ["AccountKey=" + _chars(ALNUM + "+/", 86) + "=="],
    "BasicAuthDetector": ["https://hook:" + _chars(ALNUM, 12) + "@agents.example.com/a2a"],
    "DiscordBotTokenDetector": ["M" + _chars(ALNUM, 23) + "." + _chars(ALNUM, 6) + "." + _chars(ALNUM, 27)],
    "GitHubTokenDetector": [prefix + "_" + _chars(ALNUM, 36) for prefix in ("ghp", "gho", "ghu", "ghs", "ghr")],
    "GitLabTokenDetector": ["glpat-" + _chars(ALNUM, 20), "glrt-" + _chars(ALNUM, 24),
                            "GR1348941" + _chars(ALNUM, 20), "glptt-" + _chars(ALNUM, 40)],
    "JwtTokenDetector": ["eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
                         "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"],
    "MailchimpDetector": [_chars("0123456789abcdef", 32) + "-us12"],
    "NpmDetector": ["//registry.npmjs.org/:_authToken=npm_" + _chars(ALNUM, 36)],
    "OpenAIDetector": ["sk-" + _chars(ALNUM, 20) + "T3BlbkFJ" + _chars(ALNUM, 20)],
    "PrivateKeyDetector": ["-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + _chars(ALNUM, 40)
                           + "\n-----END RSA PRIVATE KEY-----",
                           "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn" + _chars(ALNUM, 40)
                           + "\n-----END OPENSSH PRIVATE KEY-----"],
    "PypiTokenDetector": ["pypi-AgEIcHlwaS5vcmc" + _chars(ALNUM, 72)],
    "SendGridDetector": ["SG." + _chars(ALNUM, 22) + "." + _chars(ALNUM, 43)],
    "SlackDetector": ["xoxb-1234567890-0987654321-" + _chars(LOWER, 24),
                      "https://hooks.slack.com/services/T" + _chars(ALNUM, 8) + "/B" + _chars(ALNUM, 8) + "/"
                      + _chars(ALNUM, 24)],
    "SquareOAuthDetector": ["sq0csp-" + _chars(ALNUM, 43)],
    "StripeDetector": ["sk_live_" + _chars(ALNUM, 24), "rk_live_" + _chars(ALNUM, 24)],
    "TelegramBotTokenDetector": ["123456789:" + _chars(ALNUM, 35)],
    "TwilioKeyDetector": ["AC" + _chars(LOWER, 32), "SK" + _chars(LOWER, 32)],
}
#: detect-secrets plugins left out, and why (docs/redaction.md says the same)
LEFT_OUT = {
    "ArtifactoryDetector": "its `AP[0-9A-F]…` password shape matches plain words",
    "CloudantDetector": "keyword shapes (`cloudant_password = …`): the name vocabulary covers them",
    "Base64HighEntropyString": "ids, digests and ETags are high-entropy strings",
    "HexHighEntropyString": "ids, digests and ETags are high-entropy strings",
    "IbmCloudIamDetector": "keyword shapes: the name vocabulary covers them",
    "IbmCosHmacDetector": "keyword shapes: the name vocabulary covers them",
    "IPPublicDetector": "an address is no secret",
    "KeywordDetector": "source-code assignments: the name vocabulary covers them",
    "SoftlayerDetector": "keyword shapes: the name vocabulary covers them",
}


def _plugins():
    return {cls.__name__: cls for cls in get_mapping_from_secret_type_to_class().values()}


def test_every_plugin_is_adopted_or_left_out_with_a_reason():
    assert set(_plugins()) == set(SAMPLES) | set(LEFT_OUT)
    sources = {source for _, _, source, _ in SHAPES} - {"ours"}
    assert sources == set(SAMPLES) - {"BasicAuthDetector"}  # URL userinfo is the scanner's own pass


@pytest.mark.parametrize("plugin", sorted(SAMPLES))
def test_what_detect_secrets_flags_the_policy_masks(plugin):
    detector = _plugins()[plugin]()
    scanner = Scanner(DEFAULT)
    for sample in SAMPLES[plugin]:
        line = sample.replace("\n", " ") if plugin != "PrivateKeyDetector" else sample.splitlines()[0]
        assert detector.analyze_line(filename="capture.http", line=line, line_number=1), (plugin, sample)
        text = f'{{"note": "here: {sample} (end)"}}'
        found = scanner.find(text)
        assert found, (plugin, sample)
        masked, _ = Redactor(b"k").text(text)
        secret_part = sample.split(":")[-1].split("=")[-1].split("@")[0] if plugin == "BasicAuthDetector" else sample
        assert secret_part.strip("-") not in masked, (plugin, masked)


@pytest.mark.parametrize("text", [
    "bearer authentication is required", "basic understanding", "token count 5", "keyword search",
    "123e4567-e89b-12d3-a456-426614174000", 'W/"3f9a1c0d2e"', "sha256:3f9a1c", "https://agents.example.com/a2a",
    "APACHE2LICENSE", "Application/JSON", "taskId=123e4567", "maxTokens=300", "tokenUrl=https://idp/token",
])
def test_near_misses_stay_readable(text):
    assert Redactor(b"k").text(text) == (text, [])
