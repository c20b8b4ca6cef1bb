"""A labelled corpus for the PII guard's checks: each check's values in the sentences they turn up
in, and the look-alikes that must be left alone (order numbers, versions, UUIDs, timestamps...).

Deterministic: the same seed gives the same lines, so a figure in docs/pii.md can be reproduced.
Run it as a script to print the lines (``python -m tests.agent.pii_corpus | head``).
"""

# ruff: noqa: RUF001 - the look-alike characters are what the corpus is about
from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from fisk_ai.agent.pii import Check

SEED = 13

HOSTILE_OUTPUTS = {
    "dashes": "-" * 65536,
    "unended-keys": "-----BEGIN RSA PRIVATE KEY-----" * 2000,
    "unended-nats": "-----BEGIN NATS USER JWT-----\n" * 2000,
    "letters-then-at": "a" * 65535 + "@",
    "jwt-heads": "eyJ" * 21845,
    "suffixes": " St" * 21845,
    "ats": "a@" * 32768,
    "zero-width-joined": "a\u200b" * 32768,
    "fullwidth-digits": "４" * 65536,
    "fullwidth-ats": "ａ＠" * 32768,
    "cjk-ats": "用@" * 32768,
    "aws-words": "aws " * 16384,
}
"""64 KiB tool outputs that each took from a second to two minutes when a pattern re-read a long
run from each of its characters: the test scans them, bench/telemetry.py times them."""
PER_CHECK = 160
PER_LOOK_ALIKE = 90


@dataclass(frozen=True)
class Line:
    text: str
    expected: frozenset[Check]
    # What generated the line: a check's name, or the look-alike's kind.
    source: str


FIRST = ("jane", "omar", "li", "sofia", "raj", "anna", "mateo", "chloe", "kwame", "yuki")
LAST = ("doe", "haddad", "wei", "rossi", "patel", "berg", "garcia", "martin", "mensah", "sato")
DOMAINS = ("example.com", "example.co.uk", "mail.example.org", "corp.example.net", "example.io")
STREETS = ("Baker", "Elm", "Maple", "Pennsylvania", "Evergreen", "Oak Hill", "Mission", "High")
SUFFIXES = ("Street", "St", "Avenue", "Ave", "Road", "Rd", "Lane", "Drive", "Boulevard", "Way")
TOWNS = ("Springfield", "Portland", "London", "Austin", "Boston", "Denver")
MONTHS = ("January", "March", "May", "July", "September", "November", "Feb", "Oct")
# Area codes in service, so libphonenumber calls the numbers valid.
AREA_CODES = ("212", "312", "415", "617", "202", "303", "503", "206", "646", "713")
BASE32 = string.ascii_uppercase + "234567"
VIN_ALPHABET = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
TOKEN_ALPHABET = string.ascii_letters + string.digits


def digits(rng: random.Random, count: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(count))


def chars(rng: random.Random, alphabet: str, count: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(count))


def luhn_complete(partial: str) -> str:
    """``partial`` with the check digit that makes it Luhn-valid."""
    total = 0
    for index, char in enumerate(reversed(partial)):
        digit = int(char)
        doubled = digit * 2 if index % 2 == 0 else digit
        total += doubled - 9 if doubled > 9 else doubled
    return partial + str((10 - total % 10) % 10)


def iban(rng: random.Random) -> str:
    country, bban = rng.choice(
        [
            ("DE", digits(rng, 18)),
            ("GB", chars(rng, string.ascii_uppercase, 4) + digits(rng, 14)),
            ("FR", digits(rng, 23)),
            ("NL", chars(rng, string.ascii_uppercase, 4) + digits(rng, 10)),
        ]
    )
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    compact = f"{country}{98 - int(numeric) % 97:02d}{bban}"
    if rng.random() < 0.5:
        return " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
    return compact


def aba_routing(rng: random.Random) -> str:
    eight = digits(rng, 8)
    weighted = sum(int(d) * w for d, w in zip(eight, (3, 7, 1, 3, 7, 1, 3, 7), strict=True))
    return eight + str((10 - weighted % 10) % 10)


def ssn(rng: random.Random) -> str:
    area = rng.choice([n for n in range(1, 900) if n != 666])
    return f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


VIN_LETTERS = dict(
    zip(
        "ABCDEFGHJKLMNPRSTUVWXYZ",
        (1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 7, 9, 2, 3, 4, 5, 6, 7, 8, 9),
        strict=True,
    )
)
# Position ten of a VIN is the model year: any letter or digit but I, O, Q, U, Z and 0.
MODEL_YEARS = "ABCDEFGHJKLMNPRSTVWXY123456789"
VIN_WEIGHTS = (8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2)


def vin(rng: random.Random) -> str:
    body = list(rng.choice(("1HG", "WVW", "JTD", "5YJ", "1FT")) + chars(rng, VIN_ALPHABET, 14))
    body[8] = "0"
    body[9] = rng.choice(MODEL_YEARS)
    total = sum(
        (int(c) if c.isdigit() else VIN_LETTERS[c]) * w
        for c, w in zip(body, VIN_WEIGHTS, strict=True)
    )
    body[8] = "X" if total % 11 == 10 else str(total % 11)
    return "".join(body)


def card(rng: random.Random) -> str:
    prefix, length = rng.choice(
        [("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("37", 15), ("6011", 16), ("4", 13)]
    )
    number = luhn_complete(prefix + digits(rng, length - len(prefix) - 1))
    style = rng.randrange(3)
    if style == 0:
        return number
    separator = " " if style == 1 else "-"
    if length == 13:  # old Visa numbers are printed whole
        return number
    if length == 15:
        return separator.join((number[:4], number[4:10], number[10:]))
    return separator.join(number[i : i + 4] for i in range(0, 16, 4))


def phone(rng: random.Random) -> str:
    area, exchange, line = rng.choice(AREA_CODES), rng.randint(201, 998), digits(rng, 4)
    return rng.choice(
        [
            f"({area}) {exchange}-{line}",
            f"{area}-{exchange}-{line}",
            f"{area}.{exchange}.{line}",
            f"+1 {area} {exchange} {line}",
            f"+44 20 7{digits(rng, 3)} {digits(rng, 4)}",
            f"+49 30 {rng.randint(2, 9)}{digits(rng, 6)}",
            f"+33 1 {rng.randint(40, 59)} {digits(rng, 2)} {digits(rng, 2)} {digits(rng, 2)}",
            # A national number of another country: left alone by design (docs/pii.md).
            f"020 7{digits(rng, 3)} {digits(rng, 4)}",
        ]
    )


def birth_date(rng: random.Random) -> str:
    year, month, day = rng.randint(1940, 2008), rng.randint(1, 12), rng.randint(1, 28)
    return rng.choice(
        [
            f"{year}-{month:02d}-{day:02d}",
            f"{month:02d}/{day:02d}/{year}",
            f"{day}.{month}.{year}",
            f"{MONTHS[month % len(MONTHS)]} {day}, {year}",
            f"{day} {MONTHS[month % len(MONTHS)]} {year}",
            f"{day:02d}/{month:02d}/{year % 100:02d}",
        ]
    )


def street_address(rng: random.Random) -> str:
    number = rng.randint(1, 9999)
    address = f"{number} {rng.choice(STREETS)} {rng.choice(SUFFIXES)}"
    tail = rng.randrange(4)
    if tail == 1:
        address += f", {rng.choice(TOWNS)}"
    elif tail == 2:
        address += f", {rng.choice(TOWNS)}, OR 97{digits(rng, 3)}"
    elif tail == 3:
        address = f"P.O. Box {rng.randint(1, 99999)}"
    if rng.random() < 0.05:
        # Written all in lowercase: left alone by design (docs/pii.md).
        return address.lower()
    return address


def secret(rng: random.Random) -> str:
    token = chars(rng, TOKEN_ALPHABET, 40)
    values = [
        lambda: "AKIA" + chars(rng, string.ascii_uppercase + string.digits, 16),
        lambda: "ghp_" + token[:36],
        lambda: "sk-ant-api03-" + token,
        lambda: "xoxb-" + digits(rng, 11) + "-" + token[:24],
        lambda: "sk_live_" + token[:24],
        lambda: rng.choice(("SU", "SA")) + chars(rng, BASE32, 56),
        lambda: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI" + token[:20] + "." + token[20:],
        lambda: "Bearer " + token[:30] + digits(rng, 2),
        lambda: "password=" + token[:12] + digits(rng, 2),
        lambda: "glpat-" + token[:20],
        lambda: f"-----BEGIN RSA PRIVATE KEY-----\nMIIEow{token}\n-----END RSA PRIVATE KEY-----",
        lambda: "sk-proj-" + token + "_" + token[:8],
        lambda: "AIza" + token[:35],
        lambda: f"client_secret: '{token[:20]}9'",
        lambda: f"aws_secret_access_key = {token}",
        lambda: f"-----BEGIN NATS USER JWT-----\neyJ0eXAi{token}\n------END NATS USER JWT------",
    ]
    return rng.choice(values)()


def cloud_resource(rng: random.Random) -> str:
    account = digits(rng, 12)
    return rng.choice(
        [
            f"arn:aws:iam::{account}:role/deploy-{rng.randint(1, 99)}",
            f"arn:aws:s3:::bucket-{digits(rng, 4)}/logs",
            f"arn:aws:lambda:eu-west-1:{account}:function:resize",
            f"AWS account {account}",
            f'"AccountId": "{account}"',
            f"/subscriptions/{uuid(rng)}/resourceGroups/rg-{rng.randint(1, 9)}",
            f"projects/acme-prod-{digits(rng, 3)}/zones/us-east1-b/instances/vm-{digits(rng, 2)}",
            f"i-0{chars(rng, '0123456789abcdef', 16)}",
        ]
    )


def uuid(rng: random.Random) -> str:
    hexes = chars(rng, "0123456789abcdef", 32)
    return f"{hexes[:8]}-{hexes[8:12]}-{hexes[12:16]}-{hexes[16:20]}-{hexes[20:]}"


# Each check: how to make a value, and the sentences it turns up in.
POSITIVES: dict[Check, tuple[Callable[[random.Random], str], tuple[str, ...]]] = {
    Check.EMAIL: (
        lambda r: f"{r.choice(FIRST)}.{r.choice(LAST)}{r.randint(1, 99)}@{r.choice(DOMAINS)}",
        ("contact {} for access", "From: {}", "reply-to={}", '{{"email": "{}"}}'),
    ),
    Check.PHONE: (phone, ("call me on {}", "phone: {}", "tel {} (mobile)", "reach ops at {}.")),
    Check.CREDIT_CARD: (card, ("card {} exp 09/29", "paid with {}", "pan={}", "CC: {}")),
    Check.IBAN: (iban, ("iban {}", "wire to {} today", "IBAN: {}", "account {} (EUR)")),
    Check.BANK_ACCOUNT: (
        lambda r: r.choice(
            [
                f"routing number {aba_routing(r)}",
                f"account number: {digits(r, r.randint(8, 12))}",
                f"acct # {digits(r, 10)}",
                f"sort code {digits(r, 2)}-{digits(r, 2)}-{digits(r, 2)}",
            ]
        ),
        ("pay to {}", "{} for the refund", "the customer's {}", "bank details: {}"),
    ),
    Check.SSN: (
        lambda r: r.choice(
            [ssn(r), "SSN " + ssn(r).replace("-", ""), "social security number " + ssn(r)]
        ),
        ("ssn {}", "{} on the W-2", "applicant {}", "id: {}"),
    ),
    Check.CLOUD_RESOURCE: (
        cloud_resource,
        ("resource {}", "denied for {}", "created {} ok", "target: {}"),
    ),
    Check.DATE_OF_BIRTH: (
        lambda r: (
            r.choice(("date of birth: ", "DOB ", "born on ", "birthdate ", "D.O.B. "))
            + birth_date(r)
        ),
        ("patient {}", "{}", "record shows {}", "applicant, {}"),
    ),
    Check.DRIVERS_LICENSE: (
        lambda r: (
            r.choice(("driver's license number ", "DL #: ", "driving licence "))
            + r.choice(
                (f"D{digits(r, 7)}", f"S530-{digits(r, 4)}-{digits(r, 4)}", f"{digits(r, 9)}")
            )
        ),
        ("{}", "verified {}", "holder of {}", "scan of {} attached"),
    ),
    Check.MEDICAL_ID: (
        lambda r: (
            r.choice(("MRN: ", "medical record number ", "patient id ", "member ID "))
            + r.choice((digits(r, 8), f"PT-{digits(r, 6)}", f"XJH{digits(r, 9)}"))
        ),
        ("{}", "admitted, {}", "chart for {}", "claim lists {}"),
    ),
    Check.OTP: (
        lambda r: (
            r.choice(("verification code is ", "OTP: ", "one-time code ", "2FA code "))
            + digits(r, r.choice((4, 6, 8)))
        ),
        ("your {}", "{}", "sms says {}", "use {} to sign in"),
    ),
    Check.PASSPORT: (
        lambda r: (
            r.choice(("passport number ", "Passport No: ", "passport # "))
            + r.choice((digits(r, 9), f"X{digits(r, 8)}", f"{chars(r, 'CFGHJK', 2)}{digits(r, 7)}"))
        ),
        ("{}", "traveller {}", "copy of {}", "{} expires 2031"),
    ),
    Check.PHYSICAL_ADDRESS: (
        street_address,
        ("ship to {}", "lives at {}", "address: {}", "office moved to {}."),
    ),
    Check.SECRET: (secret, ("{}", "export TOKEN_VALUE={}", "found {} in .env", "log: {}")),
    Check.VIN: (
        lambda r: r.choice(("", "VIN ", "vehicle ")) + vin(r),
        ("{}", "insured {}", "recall applies to {}", "car: {}"),
    ),
}


def _luhn_failing(rng: random.Random) -> str:
    number = luhn_complete("4" + digits(rng, 14))
    return number[:-1] + str((int(number[-1]) + 1) % 10)


def _hex(rng: random.Random, count: int) -> str:
    return chars(rng, "0123456789abcdef", count)


def _timestamp(rng: random.Random) -> str:
    day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    clock = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    return f"{day}T{clock}.{digits(rng, 3)}Z INFO done"


def _semver(rng: random.Random) -> str:
    core = f"{rng.randint(0, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
    return f"v{core}-rc.{rng.randint(1, 9)}+build.{rng.randint(1, 999)}"


def _ipv4(rng: random.Random) -> str:
    octets = (rng.randint(1, 223), rng.randint(0, 255), rng.randint(0, 255), rng.randint(1, 254))
    return "host " + ".".join(map(str, octets)) + f":{rng.randint(1024, 65535)}"


def _tracking(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"tracking 1Z{chars(rng, string.ascii_uppercase + string.digits, 16)}"
    groups = " ".join(digits(rng, 4) for _ in range(4))
    return f"parcel 9400 {groups} {digits(rng, 2)}"


def _price(rng: random.Random) -> str:
    return (
        f"total ${rng.randint(1, 99)},{digits(rng, 3)}.{digits(rng, 2)} (EUR {rng.randint(1, 999)})"
    )


def _words_then_numbers(rng: random.Random) -> str:
    size = f"{rng.randint(30, 50)}x{rng.randint(30, 50)} mm"
    day = f"{rng.randint(2000, 2026)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return f"passport photo size {size}; the account settings page; date {day}"


# Each look-alike: text that shares a shape with some check and holds none.
LOOK_ALIKES: dict[str, Callable[[random.Random], str]] = {
    "order number": lambda r: f"order #{r.randint(10**6, 10**9)} shipped",
    "long order number": lambda r: f"order {luhn_complete('1' + digits(r, 14))} confirmed",
    "card failing luhn": lambda r: f"ref {_luhn_failing(r)}",
    "version string": lambda r: (
        f"version {r.randint(0, 30)}.{r.randint(0, 99)}.{r.randint(0, 999)}"
    ),
    "semver": _semver,
    "uuid": lambda r: f"request {uuid(r)} accepted",
    "timestamp": _timestamp,
    "epoch": lambda r: f"at {r.randint(1_600_000_000, 1_800_000_000)} pid {r.randint(100, 99999)}",
    "git sha": lambda r: f"commit {_hex(r, 40)}",
    "short sha": lambda r: f"fixed in {_hex(r, 7)} and {_hex(r, 12)}",
    "ipv4": _ipv4,
    "ipv6": lambda r: f"addr 2001:db8:{_hex(r, 4)}::{_hex(r, 3)}",
    "invoice number": lambda r: f"invoice INV-2026-{digits(r, 6)} due",
    "isbn": lambda r: f"ISBN 978-{r.randint(0, 1)}-{digits(r, 3)}-{digits(r, 5)}-{r.randint(0, 9)}",
    "tracking number": _tracking,
    "price": _price,
    "hex color": lambda r: f"color: #{_hex(r, 6)}; border #{_hex(r, 3).upper()}",
    "line and column": lambda r: f"src/app/main.py:{r.randint(1, 2000)}:{r.randint(1, 120)}: E501",
    "words then numbers": _words_then_numbers,
    "short dashed number": lambda r: (
        f"call ext. {digits(r, 3)}-{digits(r, 4)}, room {digits(r, 2)}"
    ),
    "unissued ssn": lambda r: f"{r.choice(['000', '666', '9' + digits(r, 2)])}-12-{digits(r, 4)}",
    "bad iban": lambda r: f"code DE{digits(r, 2)}{digits(r, 18)}X",
    "token word": lambda r: f"max_tokens={r.randint(1000, 500000)} the token is short",
    "placeholder bearer": lambda r: "Authorization: Bearer YOUR_TOKEN_HERE_PLEASE",
    "public nkey": lambda r: "U" + chars(r, BASE32, 55),
    "upper hex id": lambda r: f"build {_hex(r, 17).upper()} ok",
    "street-like prose": lambda r: (
        f"{r.randint(2, 12)} steps down the road, {r.randint(2, 9)} ways"
    ),
    "duration and size": lambda r: (
        f"took {r.randint(1, 999)}ms, {r.randint(1, 99)}.{r.randint(0, 9)} MB"
    ),
    "port list": lambda r: f"ports {r.randint(1000, 9999)}, {r.randint(1000, 9999)}",
    "sha256 digest": lambda r: f"image@sha256:{_hex(r, 64)}",
    "base64 blob": lambda r: f"data: {chars(r, TOKEN_ALPHABET + '+/', 60)}==",
    "pod name": lambda r: f"pod web-{_hex(r, 9)}-{chars(r, 'bcdfghjklmnpqrstvwxz2456789', 5)}",
    "date in prose": lambda r: f"released on {birth_date(r)}, patched {r.randint(1, 12)}/2025",
    "numbered prose": lambda r: (
        f"{r.randint(2, 99)} Items Left in Stock; Chapter {r.randint(1, 40)}"
    ),
    "key names": lambda r: "api_key: ${API_KEY} password: <redacted> token: null",
    "aws region": lambda r: f"region us-east-{r.randint(1, 2)}, the account settings",
}


ZERO_WIDTHS = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")
FULLWIDTH = str.maketrans("0123456789@.", "０１２３４５６７８９＠．")
# Between a card's groups: spaces, dashes and dots of every kind, a no-break space among them.
CARD_GAPS = (" ", "-", ".", "\u00a0", "\u202f", "\u2013", "\u2009")
NO_BREAK_SPACES = ("\u00a0", "\u202f")
PER_EVASION = 40


def hidden(rng: random.Random, value: str) -> str:
    """``value`` with one to three zero-width characters inside it."""
    characters = list(value)
    for _ in range(rng.randint(1, 3)):
        characters.insert(rng.randint(1, len(characters) - 1), rng.choice(ZERO_WIDTHS))
    return "".join(characters)


def card_digits(rng: random.Random) -> str:
    prefix = rng.choice(("4", "51", "55", "2221", "6011"))
    return luhn_complete(prefix + digits(rng, 15 - len(prefix)))


def card_groups(rng: random.Random, number: str, gaps: tuple[str, ...]) -> str:
    groups = [number[i : i + 4] for i in range(0, 16, 4)]
    return groups[0] + "".join(rng.choice(gaps) + group for group in groups[1:])


def email(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)}.{rng.choice(LAST)}{rng.randint(1, 99)}@{rng.choice(DOMAINS)}"


def provider_key(rng: random.Random) -> str:
    token = chars(rng, TOKEN_ALPHABET, 40)
    return rng.choice(
        (
            "sk-ant-api03-" + token,
            "ghp_" + token[:36],
            "AKIA" + chars(rng, string.ascii_uppercase + string.digits, 16),
            "glpat-" + token[:20],
            "xoxb-" + digits(rng, 11) + "-" + token[:24],
        )
    )


IDN_EMAILS = (
    "jürgen.müller{n}@bücher.de", "søren{n}@blåbær.dk", "josé.peña{n}@correo.españa.es",
    "user{n}@münchen.example", "info{n}@xn--bcher-kva.example", "анна{n}@почта.рф",
)  # fmt: skip
CJK_EMAILS = (
    "用户{n}@例子.公司", "ユーザー{n}@例え.テスト", "홍길동{n}@회사.한국", "tanaka{n}@例え．jp",
    "li.wei{n}@公司.中国", "support{n}@例子。广告",
)  # fmt: skip

# Each evasion: the check it hides a value of, and how the value is written to hide it.
EVASIONS: dict[str, tuple[Check, Callable[[random.Random], str]]] = {
    "zero-width in a key": (Check.SECRET, lambda r: f"found {hidden(r, provider_key(r))} in .env"),
    "zero-width in a card": (Check.CREDIT_CARD, lambda r: f"card {hidden(r, card(r))} on file"),
    "zero-width in an email": (Check.EMAIL, lambda r: f"contact {hidden(r, email(r))} today"),
    "fullwidth card": (Check.CREDIT_CARD, lambda r: f"pan={card(r).translate(FULLWIDTH)}"),
    "fullwidth email": (Check.EMAIL, lambda r: f"From: {email(r).replace('@', '＠')}"),
    "fullwidth digits in an email": (
        Check.EMAIL,
        lambda r: f"reply-to={email(r).translate(FULLWIDTH)}",
    ),
    "card with no-break spaces": (
        Check.CREDIT_CARD,
        lambda r: f"paid with {card_groups(r, card_digits(r), NO_BREAK_SPACES)}",
    ),
    "card with dots": (
        Check.CREDIT_CARD,
        lambda r: f"CC: {card_groups(r, card_digits(r), ('.',))}",
    ),
    "card with mixed separators": (
        Check.CREDIT_CARD,
        lambda r: f"card {card_groups(r, card_digits(r), CARD_GAPS)} exp 09/29",
    ),
    "lowercase aws key in context": (
        Check.SECRET,
        lambda r: r.choice(
            ("aws_access_key_id = {}", '"aws_access_key_id": "{}"', "AWS key: {}", "access key {}")
        ).format("akia" + chars(r, string.ascii_lowercase + string.digits, 16)),
    ),
    "idn email": (
        Check.EMAIL,
        lambda r: f"mail {r.choice(IDN_EMAILS).format(n=r.randint(1, 99))} for access",
    ),
    "cjk email": (
        Check.EMAIL,
        lambda r: f"連絡先 {r.choice(CJK_EMAILS).format(n=r.randint(1, 99))} まで",
    ),
}


def _mixed_separators_failing_luhn(rng: random.Random) -> str:
    return f"ref {card_groups(rng, _luhn_failing(rng), CARD_GAPS)}"


# Look-alikes of the evasions: the same characters around values that are not personal data.
EVASION_LOOK_ALIKES: dict[str, Callable[[random.Random], str]] = {
    "zero-width in prose": lambda r: (
        f"می\u200cخواهم build {r.randint(100, 999)} re\u00adsumed, word\u2060joiner ok"
    ),
    "fullwidth order number": lambda r: (
        f"注文番号 ＃{''.join(r.choice('０１２３４５６７８９') for _ in range(9))} 発送済み"
    ),
    "fullwidth version": lambda r: (
        f"ｖ{r.randint(1, 9)}．{r.randint(0, 20)}．{r.randint(0, 9)} リリース".translate(FULLWIDTH)
    ),
    "fullwidth handle": lambda r: f"＠{r.choice(FIRST)}_dev thanks for the review",
    "at mention in cjk": lambda r: r.choice(
        ("@田中さん ありがとう", "メール@社内 です", "@李伟 收到")
    ),
    "dotted number failing luhn": _mixed_separators_failing_luhn,
    "no-break space thousands": lambda r: (
        f"total {r.randint(1, 999)}\u00a0{digits(r, 3)}\u00a0{digits(r, 3)},{digits(r, 2)} EUR, "
        f"population {r.randint(10, 99)}\u202f{digits(r, 3)}\u202f{digits(r, 3)}"
    ),
    "lowercase akia without context": lambda r: (
        f"slug akia{chars(r, string.ascii_lowercase + string.digits, 16)} in the cache"
    ),
    "idn host without mailbox": lambda r: (
        f"see https://bücher.de/katalog@v{r.randint(1, 9)} and münchen.example"
    ),
}


def corpus(seed: int = SEED) -> Iterator[Line]:
    rng = random.Random(seed)
    for check, (make, templates) in POSITIVES.items():
        for index in range(PER_CHECK):
            text = templates[index % len(templates)].format(make(rng))
            yield Line(text, frozenset({check}), check.name.lower())
    for kind, make in LOOK_ALIKES.items():
        for _ in range(PER_LOOK_ALIKE):
            yield Line(make(rng), frozenset(), kind)
    for kind, (check, make) in EVASIONS.items():
        for _ in range(PER_EVASION):
            yield Line(make(rng), frozenset({check}), kind)
    for kind, make in EVASION_LOOK_ALIKES.items():
        for _ in range(PER_LOOK_ALIKE):
            yield Line(make(rng), frozenset(), kind)


if __name__ == "__main__":
    for line in corpus():
        print(sorted(c.name for c in line.expected), line.text)
