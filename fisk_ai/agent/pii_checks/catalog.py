"""Upstream's default set of checks, in the order the scanner gives them precedence.

Every pattern anchors on something a value carries (a prefix, an envelope, a checksum) or on a
context word in front of it; none anchors on "looks random", since a git SHA, a UUID and a
base64 blob are opaque keys by shape alone and a rule broad enough to catch the key takes all
three.
"""

from __future__ import annotations

import re

from fisk_ai.agent.pii_checks.base import Check, Detector, RegexCheck, SecretKind, Validator
from fisk_ai.agent.pii_checks.mail import EmailCheck
from fisk_ai.agent.pii_checks.phone import PhoneCheck
from fisk_ai.agent.pii_checks.validators import (
    aba_routing_valid,
    birth_date_valid,
    card_valid,
    has_digit,
    iban_valid,
    ssn_valid,
    vin_valid,
)

# Credentials recognised by their own shape, wherever they appear. Each leads with a literal the
# regex engine searches for directly, so each costs tens of microseconds on 64 KiB; the one that
# does not has a needle for the scanner's substring test. The third field is the placeholder's
# name where the Go fisk-ai writes a narrower one than SECRET: the shapes its own credential pass
# finds; the ones its ferret-scan pass finds are [SECRET-REDACTED] there too.
_SECRET_SHAPES = (
    # Key blocks: the header lines, then the body's own characters read possessively, so a BEGIN
    # line with no END costs nothing past its body. The END line is optional, so the first part
    # of a key in an output cut short is still a secret.
    (
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----\s*(?:[\w-]+: [^\n]*\n\s*)*"
        r"[A-Za-z0-9+/=\s]*+(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?",
        (),
        None,
    ),
    # A NATS credentials file: the closing lines carry six dashes to the opening lines' five.
    # Each starts at the first dash of a run (the lookbehind), so a long row of dashes is read
    # once rather than once from each of its dashes.
    (
        r"---(?<!----)-*+\s*BEGIN NATS USER JWT\s*-{3,}(?:[A-Za-z0-9_.=\s]|-(?!--))*+"
        r"(?:-{3,}\s*END NATS USER JWT\s*-{3,})?",
        (),
        SecretKind.NATS_CREDENTIALS,
    ),
    (
        r"---(?<!----)-*+\s*BEGIN [A-Z ]*NKEY SEED\s*-{3,}(?:[A-Z0-9=\s]|-(?!--))*+"
        r"(?:-{3,}\s*END [A-Z ]*NKEY SEED\s*-{3,})?",
        (),
        SecretKind.NATS_SEED,
    ),
    # A bare nkey seed: S, the entity letter, 56 base32 characters; the public key beside it
    # starts with the entity letter itself and is not secret.
    (r"\bS[UAONCX][A-Z2-7]{56}\b", (), SecretKind.NATS_SEED),
    (r"\bsk-ant-[A-Za-z0-9_-]{20,}", (), SecretKind.API_KEY),
    (r"\bsk-or-v1-[A-Za-z0-9]{32,}", (), SecretKind.API_KEY),
    (r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,}", (), SecretKind.API_KEY),
    (r"\bAKIA[A-Z0-9]{16}\b", (), None),
    (r"\bASIA[A-Z0-9]{16}\b", (), None),
    (r"\bgh[pousr]_[A-Za-z0-9]{36,}\b", (), SecretKind.API_KEY),
    (r"\bgithub_pat_[A-Za-z0-9_]{22,}", (), SecretKind.API_KEY),
    (r"\bglpat-[A-Za-z0-9_-]{20,}", (), None),
    (r"\bxox[abposr]-[A-Za-z0-9-]{10,}", (), SecretKind.API_KEY),
    (r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]+", (), None),
    (r"\bAIza[0-9A-Za-z_-]{35}\b", (), None),
    (r"\bya29\.[0-9A-Za-z_-]{20,}", (), None),
    (r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", ("k_",), None),
    (r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b", (), None),
    (r"\bSK[0-9a-fA-F]{32}\b", (), None),  # Twilio
    (r"\bnpm_[A-Za-z0-9]{36}\b", (), None),
    (r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}", (), None),
    (r"\bhf_[A-Za-z0-9]{34,}\b", (), None),
    (r"\bdop_v1_[a-f0-9]{64}\b", (), None),
    (r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", (), None),
    (r"\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}", (), None),
    (r"AccountKey=[A-Za-z0-9+/]{86}==", (), None),
    # Starts only where a run of token characters starts, so "eyJeyJeyJ..." is read once.
    (r"eyJ(?<![\w-]eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", (), None),
)

# Credentials recognised by the word in front of them. Only the value is redacted, and it must
# hold a digit: "token" followed by a long identifier is everywhere in source code.
_BEARER = r"(?i)\b(?:bearer|token)\s+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)"
_CREDENTIAL_ASSIGNMENT = (
    r"(?i)(?:api[_-]?key|secret(?:[_-]?access)?(?:[_-]?key)?|access[_-]?token|auth[_-]?token"
    r"|client[_-]?secret|token|password|passwd|pwd)\b[\"']?\s*[:=]\s*[\"']?"
    r"(?P<v>[^\s\"',;]{8,})"
)
# An AWS access key id written in lowercase has no shape of its own left, so it counts only
# after a word that says what it is (``aws_access_key_id = akia...``).
_AWS_KEY_IN_CONTEXT = (
    r"(?i:aws|access)[\w -]{0,24}?[\"']?\s*[:=]?\s*[\"']?(?<!\w)(?P<v>(?i:akia|asia)[a-z0-9]{16})\b"
)
_ASSIGNMENT_WORDS = (
    "api", "secret", "access", "auth", "client", "token", "password", "passwd", "pwd"
)  # fmt: skip

# Cloud resource ids: an ARN, an Azure resource path, a GCP resource name, an AWS resource id,
# and an AWS account id where the words around it say it is one.
_CLOUD = (
    (r"arn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:(?:\d{12})?:[^\s\"'<>,;]+", ()),
    (
        r"/subscriptions/[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}(?:/[^\s\"'<>,;]+)?",
        (),
    ),
    (
        r"\bprojects/[a-z][a-z0-9-]{4,28}[a-z0-9]/(?:locations|zones|regions|instances|topics"
        r"|subscriptions|datasets|buckets|secrets|serviceAccounts|databases|clusters)"
        r"/[^\s\"'<>,;]+",
        (),
    ),
    (
        r"\b[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam\.gserviceaccount\.com\b",
        ("gserviceaccount",),
    ),
    # One pattern per AWS resource prefix, so each leads with its literal.
    *(
        (rf"\b{prefix}-(?:[0-9a-f]{{17}}|[0-9a-f]{{8}})\b", ())
        for prefix in ("i", "vol", "snap", "sg", "subnet", "vpc", "eni", "ami", "igw", "rtb")
    ),
)
_AWS_ACCOUNT = (
    r"(?i:aws[ _-]?account(?:[ _-]?id)?|account[ _-]?id|accountid|owner[ _-]?id)"
    r"[\"']?\s*[:=#]?\s*[\"']?(?P<v>\d{4}-?\d{4}-?\d{4})\b"
)

# Leading with a character class and checking the character before it in a lookbehind after it
# lets the regex engine skip ahead to the class, where a leading \b would try every position.
_IBAN = r"[A-Z](?<![\w][A-Z])[A-Z]\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"
# The groupings card numbers are printed in (4-4-4-4, 4-4-4-4-3, Amex and Diners 4-6-5/4-6-4,
# or none), each gap a space, a dash, a dot or nothing, mixed as they come (a card pasted from
# a form with a dot here and a dash there is still a card); a group of digits before or after it
# means the number is part of a longer one (a parcel tracking number), not a card. One pattern
# per first digit a card network issues (2 to 6), each led by its literal: the regex engine then
# visits only the digits that could start a card, which halves the cost on digit-heavy logs.
_CARD_BODY = (
    r"\d{3}(?:[ .-]?\d{4}[ .-]?\d{4}[ .-]?\d{4}(?:[ .-]?\d{3})?|[ .-]?\d{6}[ .-]?\d{4,5}"
    r"|\d{9,15})(?![\w-]|\.\d| \d{4})"
)
_CARDS = tuple(rf"{first}(?<![\w.-]{first})(?<!\d[ .-]{first})" + _CARD_BODY for first in "23456")
_SSN = r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])"
_SSN_WORDS = r"(?i:\bssn|social security(?: number| no\.?| #)?)"
_SSN_IN_CONTEXT = _SSN_WORDS + r"\s*[:#]?\s*(?P<v>\d{3}[ ]?\d{2}[ ]?\d{4})\b"

_BANK_WORDS = (
    r"(?i:\b(?:bank )?account (?:number|no\.?|#)|\bacct\.? ?(?:number|no\.?|#)?"
    r"|\bbank account|\bsort code)"
)
_BANK_ACCOUNT = _BANK_WORDS + r"\s*[:#]?\s*(?P<v>\d{2}-\d{2}-\d{2}|\d{6,17})\b"
_ROUTING_WORDS = r"(?i:\brouting(?: number| no\.?| #)?|\baba(?: number| no\.?| #)?|\brtn)"
_ROUTING = _ROUTING_WORDS + r"\s*[:#]?\s*(?P<v>\d{9})\b"

# The id after each of these words: letters and digits, at least one digit.
_ID_VALUE = (
    r"\s*(?i:no\.?|number|num|#|id)?\s*[:#]?\s*"
    r"(?P<v>\d{3} \d{3} \d{4}|[A-Z0-9][A-Z0-9-]{4,17}[A-Z0-9])\b"
)
_MEDICAL_WORDS = (
    r"(?i:\bmedical record(?: number| no\.?| #)?|\bmrn|\bpatient(?: id| number| no\.?)"
    r"|\bhealth (?:insurance|plan|card)(?: id| number| no\.?)?|\bmember id|\bmedicare"
    r"|\bmedicaid|\bnhs|\bhealth insurance claim)"
)
_MEDICAL_NEEDLES = ("medical", "mrn", "patient", "health", "member", "medicare", "medicaid", "nhs")
_PASSPORT_WORDS = r"(?i:\bpassport)"
_LICENSE_WORDS = (
    r"(?i:\bdriver'?s?[ -]licen[cs]e|\bdriving licen[cs]e|\bdl(?= ?(?:no\.?|number|#|:)))"
)
_DOB_WORDS = r"(?i:\bdate of birth|\bd\.?o\.?b\b\.?|\bbirth ?date|\bbirthday|\bborn(?: on)?)"
_DATE = (
    r"(?P<v>\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})"
    r"|\d{1,2}(?:st|nd|rd|th)? (?:of )?[A-Z][a-z]{2,8}\.?,? \d{4}"
    r"|[A-Z][a-z]{2,8}\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4})\b"
)
_DOB_NEEDLES = ("date of", "dob", "d.o.b", "birth", "born")
_DOB = _DOB_WORDS + r"[\s:#-]*(?:is |was |on )?" + _DATE
_OTP_WORDS = (
    r"(?i:\bone[- ]time (?:pass(?:word|code)|code|pin)|\botp|\bverification code|\b2fa code"
    r"|\bmfa code|\bsecurity code|\bauth(?:entication)? code|\bpasscode|\blogin code"
    r"|\bconfirmation code|\bsign-?in code)"
)
_OTP_NEEDLES = (
    "one", "otp", "verification", "2fa", "mfa", "security", "auth", "passcode", "login",
    "confirmation", "sign",
)  # fmt: skip
_OTP = _OTP_WORDS + r"(?: is)?\s*[:#]?\s*(?P<v>\d{3}[ -]?\d{3}|\d{4,8})\b"

_VIN = r"\b[A-HJ-NPR-Z0-9]{17}\b"
_VIN_IN_CONTEXT = r"\bVIN\b\s*(?:no\.?|number|#)?\s*[:#]?\s*(?P<v>[A-HJ-NPR-Z0-9]{17})\b"


_STREET_SUFFIX = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl"
    r"|Terrace|Ter|Parkway|Pkwy|Circle|Cir|Highway|Hwy|Square|Sq|Crescent|Close|Gardens|Row)"
)
# Number, one to four capitalised words, a street suffix; then an optional unit, town, and
# state with ZIP. Capitals are required so "3 main points" and "12 ways" stay prose.
_STREET = (
    r"\b\d{1,6}[A-Z]?\s+(?:[NSEW]\.?\s+)?(?:[A-Z][a-z]+\.?\s+){1,4}" + _STREET_SUFFIX + r"\b\.?"
    r"(?:,?\s+(?:Apt|Apartment|Suite|Ste|Unit|Fl|Floor|#)\.?\s*[A-Z0-9-]+)?"
    r"(?:,\s*[A-Z][a-z]+(?:\s[A-Z][a-z]+){0,2})?(?:,\s*[A-Z]{2}\s+\d{5}(?:-\d{4})?)?"
)
_PO_BOX = r"\b(?i:P\.?\s?O\.?\s+Box)\s+\d{1,6}\b"


def _regex(
    check: Check,
    pattern: str,
    valid: Validator | None = None,
    needles: tuple[str, ...] = (),
    kind: SecretKind | None = None,
) -> RegexCheck:
    word_start = pattern.startswith(r"\b")
    body = pattern.removeprefix(r"\b") if word_start else pattern
    return RegexCheck(check, re.compile(body), valid, needles, word_start, kind=kind)


def _in_context(
    check: Check,
    pattern: str,
    words: tuple[str, ...],
    valid: Validator | None = None,
    kind: SecretKind | None = None,
) -> RegexCheck:
    """A check led by a context word: it runs only where one of ``words`` (lowercase, each the
    start of a branch of the pattern) occurs, from that word on."""
    return RegexCheck(check, re.compile(pattern), valid, words, at_needles=True, kind=kind)


# The key id itself, found in the lowercased text; the context pattern then runs only over the
# stretch before each, so a text full of "aws" with no key id costs one search.
_LOWERCASE_AWS_KEY_ANCHOR = re.compile(r"(?:akia|asia)[a-z0-9]{16}\b")
_SSN_ANCHOR = re.compile(r"-\d\d-\d{4}(?![\d-])")
_PO_BOX_ANCHOR = re.compile(r"box")
_STREET_ANCHOR = re.compile(
    r" (?:" + _STREET_SUFFIX.lower().removeprefix("(?:").removesuffix(")") + r")\b"
)


def detectors() -> tuple[Detector, ...]:
    """Every check's detectors; where two overlap the earlier one wins, so a private key block
    is one secret rather than a dozen phone numbers, and "SSN 123-45-6789" one SSN."""
    return (
        *(_regex(Check.SECRET, p, needles=n, kind=k) for p, n, k in _SECRET_SHAPES),
        _in_context(Check.SECRET, _BEARER, ("bearer", "token"), has_digit, SecretKind.BEARER_TOKEN),
        _in_context(Check.SECRET, _CREDENTIAL_ASSIGNMENT, _ASSIGNMENT_WORDS, has_digit),
        RegexCheck(
            Check.SECRET,
            re.compile(_AWS_KEY_IN_CONTEXT),
            needles=("aws", "access"),
            anchor=_LOWERCASE_AWS_KEY_ANCHOR,
            reach=48,
            window=0,
        ),
        *(_regex(Check.CLOUD_RESOURCE, p, needles=n) for p, n in _CLOUD),
        _in_context(Check.CLOUD_RESOURCE, _AWS_ACCOUNT, ("aws", "account", "owner")),
        _regex(Check.IBAN, _IBAN, iban_valid),
        *(_regex(Check.CREDIT_CARD, card, card_valid) for card in _CARDS),
        _in_context(Check.BANK_ACCOUNT, _ROUTING, ("routing", "aba", "rtn"), aba_routing_valid),
        _in_context(Check.BANK_ACCOUNT, _BANK_ACCOUNT, ("bank", "account", "acct", "sort code")),
        _in_context(Check.SSN, _SSN_IN_CONTEXT, ("ssn", "social security"), ssn_valid),
        RegexCheck(Check.SSN, re.compile(_SSN), ssn_valid, anchor=_SSN_ANCHOR, reach=4),
        _in_context(Check.MEDICAL_ID, _MEDICAL_WORDS + _ID_VALUE, _MEDICAL_NEEDLES, has_digit),
        _in_context(Check.PASSPORT, _PASSPORT_WORDS + _ID_VALUE, ("passport",), has_digit),
        _in_context(Check.DRIVERS_LICENSE, _LICENSE_WORDS + _ID_VALUE, ("driv", "dl"), has_digit),
        _in_context(Check.DATE_OF_BIRTH, _DOB, _DOB_NEEDLES, birth_date_valid),
        _in_context(Check.OTP, _OTP, _OTP_NEEDLES),
        _in_context(Check.VIN, _VIN_IN_CONTEXT, ("vin",)),
        _regex(Check.VIN, _VIN, vin_valid),
        EmailCheck(),
        RegexCheck(
            Check.PHYSICAL_ADDRESS, re.compile(_STREET), anchor=_STREET_ANCHOR, reach=80, window=90
        ),
        RegexCheck(
            Check.PHYSICAL_ADDRESS, re.compile(_PO_BOX), anchor=_PO_BOX_ANCHOR, reach=8, window=8
        ),
        PhoneCheck.build(),
    )
