"""Values that are secrets by their shape, whatever name they stand under.

The well-known key prefixes are taken from detect-secrets 1.5.0 (Yelp), plugin by plugin, as
data: importing detect-secrets costs a command ~130 ms and pulls requests and PyYAML, and some
of its plugins are made for source code and fire on A2A traffic (the keyword and entropy
plugins on ids and digests, `ip_public` on addresses, Artifactory's `AP…` on plain words), so
those are left out. tests/test_redact_shapes.py runs detect-secrets' own plugins over a corpus
and holds this table to them. A few prefixes detect-secrets does not know yet (Google API keys,
GitHub fine-grained tokens, newer OpenAI and Anthropic keys, Hugging Face) follow, marked as ours.

Each entry is (kind, pattern); where a pattern has a group named `secret`, only that part is
masked (the scheme of `Bearer …` stays readable), else the whole match.
"""

from __future__ import annotations

import base64
import binascii
import re

_TAIL = r"(?![A-Za-z0-9_-])"
#: kinds whose match must start a token, not sit in the middle of one (checked by `plausible`: a
#: lookbehind at a pattern's start would keep the regex engine from scanning for its first characters)
STARTS_TOKEN = frozenset({"discord bot token", "mailchimp key", "telegram bot token", "twilio key",
                          "hugging face token"})

#: (kind, pattern, where it comes from, a text any match holds (in lower case, or as written when it has
#: capitals): the pattern is only tried on a text that holds it, as one pass over a text per pattern is cheap
#: but an alternation of them all is not)
SHAPES: tuple[tuple[str, str, str, str], ...] = (
    # credentials of an HTTP authentication scheme, wherever they are written
    ("bearer credentials", r"(?i:\bbearer)\s+(?P<secret>[A-Za-z0-9._~+/-]{6,}+=*+)(?![\"=])", "ours", "bearer"),
    ("basic credentials", r"(?i:\bbasic)\s+(?P<secret>[A-Za-z0-9+/]{6,}+=*+)(?![A-Za-z0-9+/=\"._-])", "ours", "basic"),
    # detect-secrets: JwtTokenDetector (the three parts taken whole, not its lazy last part)
    ("jwt", r"eyJ[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.?[A-Za-z0-9_.+/=-]*", "JwtTokenDetector", "eyj"),
    # detect-secrets: PrivateKeyDetector (the whole block, to its END line)
    ("private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END "
                    r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*)", "PrivateKeyDetector", "private key"),
    ("private key", r"PuTTY-User-Key-File-2[\s\S]*", "PrivateKeyDetector", "putty-user-key"),
    # detect-secrets: the prefix plugins
    ("aws access key", r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}", "AWSKeyDetector", ""),
    ("azure storage key", r"AccountKey=(?P<secret>[a-zA-Z0-9+/=]{88})", "AzureStorageKeyDetector", "accountkey="),
    ("discord bot token", r"[MNO][a-zA-Z\d_-]{23,25}\.[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}",
     "DiscordBotTokenDetector", "."),
    ("github token", r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}", "GitHubTokenDetector", "gh"),
    ("gitlab token", r"(?:glpat|gldt|glft|glsoat|glrt)-[A-Za-z0-9_-]{20,50}(?!\w)", "GitLabTokenDetector", "gl"),
    ("gitlab token", r"GR1348941[A-Za-z0-9_-]{20,50}(?!\w)", "GitLabTokenDetector", "gr1348941"),
    ("gitlab token", r"glcbt-(?:[0-9a-fA-F]{2}_)?[A-Za-z0-9_-]{20,50}(?!\w)", "GitLabTokenDetector", "glcbt-"),
    ("gitlab token", r"glimt-[A-Za-z0-9_-]{25}(?!\w)", "GitLabTokenDetector", "glimt-"),
    ("gitlab token", r"glptt-[A-Za-z0-9_-]{40}(?!\w)", "GitLabTokenDetector", "glptt-"),
    ("gitlab token", r"glagent-[A-Za-z0-9_-]{50,1024}(?!\w)", "GitLabTokenDetector", "glagent-"),
    ("gitlab token", r"gloas-[A-Za-z0-9_-]{64}(?!\w)", "GitLabTokenDetector", "gloas-"),
    ("mailchimp key", r"[0-9a-z]{32}-us[0-9]{1,2}", "MailchimpDetector", "-us"),
    ("npm token", r"//.+/:_authToken=\s*(?P<secret>npm_\S+|[A-Fa-f0-9-]{36})", "NpmDetector", "_authtoken"),
    ("openai key", r"sk-[A-Za-z0-9_-]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}", "OpenAIDetector", "t3blbkfj"),
    ("pypi token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{70,}", "PypiTokenDetector", "pypi-"),
    ("pypi token", r"pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9_-]{70,}", "PypiTokenDetector", "pypi-"),
    ("sendgrid key", r"SG\.[a-zA-Z0-9_-]{22}\.[a-zA-Z0-9_-]{43}", "SendGridDetector", "sg."),
    ("slack token", r"(?i:xox(?:a|b|p|o|s|r)-(?:\d+-)+[a-z0-9]+)", "SlackDetector", "xox"),
    ("slack webhook", r"https://hooks\.slack\.com/services/T[a-zA-Z0-9_]+/B[a-zA-Z0-9_]+/[a-zA-Z0-9_]+",
     "SlackDetector", "hooks.slack.com"),
    ("square oauth secret", r"sq0csp-[0-9A-Za-z\\_-]{43}", "SquareOAuthDetector", "sq0csp-"),
    ("stripe key", r"(?:r|s)k_live_[0-9a-zA-Z]{24}", "StripeDetector", "k_live_"),
    ("telegram bot token", r"\d{8,10}:[0-9A-Za-z_-]{35}", "TelegramBotTokenDetector", ":"),
    ("twilio key", r"AC[a-z0-9]{32}", "TwilioKeyDetector", "AC"),
    ("twilio key", r"SK[a-z0-9]{32}", "TwilioKeyDetector", "SK"),
    # not in detect-secrets 1.5.0
    ("google api key", r"AIza[0-9A-Za-z_-]{35}", "ours", "aiza"),
    ("google oauth token", r"ya29\.[0-9A-Za-z_-]{20,}", "ours", "ya29."),
    ("github token", r"github_pat_[A-Za-z0-9_]{22,}", "ours", "github_pat_"),
    ("openai key", r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}", "ours", "sk-"),
    ("anthropic key", r"sk-ant-[A-Za-z0-9_-]{20,}", "ours", "sk-ant-"),
    ("hugging face token", r"hf_[A-Za-z0-9]{30,}" + _TAIL, "ours", "hf_"),
    ("stripe key", r"(?:r|s)k_test_[0-9a-zA-Z]{24,}", "ours", "k_test_"),
    ("slack token", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", "ours", "xapp-"),
)


def compiled(extra: tuple[tuple[str, str], ...] = ()) -> list[tuple[str, re.Pattern, str]]:
    """The shapes (and a user's ``extra`` (kind, pattern) pairs, tried on every text) compiled, in order."""
    entries = [(kind, pattern, hint) for kind, pattern, _, hint in SHAPES] + [(k, p, "") for k, p in extra]
    return [(kind, re.compile(pattern), hint) for kind, pattern, hint in entries]


def plausible(kind: str, text: str, start: int, end: int) -> bool:
    """What a pattern alone cannot tell: `Basic` credentials are base64 of `user:password`, a
    `Bearer` word in prose (`bearer authentication`) is no credential, and some shapes only
    count where a token starts."""
    if kind in STARTS_TOKEN and start and (text[start - 1].isalnum() or text[start - 1] in "_-"):
        return False
    secret = text[start:end]
    if kind == "basic credentials":
        try:
            return b":" in base64.b64decode(secret + "=" * (-len(secret) % 4), validate=True)
        except (binascii.Error, ValueError):
            return False
    if kind == "bearer credentials":
        return len(secret) >= 20 or any(not c.isalpha() for c in secret)
    return True
