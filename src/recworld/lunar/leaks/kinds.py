"""Kinds of anchor strings, by the key they come from, and how ordinary a word is (``wordfreq``)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

RARE_ZIPF = 3.0
# A two-word string is distinctive when one of its words is below this (Canary Wharf: 3.44).
UNCOMMON_ZIPF = 3.5
# A name part this common is found only as part of the whole name (Will, Grace, May).
COMMON_NAME_ZIPF = 4.5
# Numbers with at least this many digits identify (ids, phones, booking and order numbers, timestamps).
ID_DIGITS = 5

KINDS = (
    "title",
    "merchant",
    "place",
    "reference",
    "id",
    "name",
    "nickname",
    "employer",
    "contact",
    "birthdate",
    "date",
    "number",
    "field",
    "demographic",
)
PERSON_KINDS = frozenset({"name", "nickname"})
# Kinds whose appearance in a synthetic record means the record copies a real one.
CONTENT_KINDS = frozenset({"title", "merchant", "place", "reference", "id", "number", "field"})


def words_of(text: str) -> frozenset[str]:
    return frozenset(text.split())


TITLE_KEYS = words_of(
    "title movie film show series episode song track album artist book item item_name product "
    "product_name game podcast channel playlist"
)
MERCHANT_KEYS = words_of(
    "merchant store shop restaurant vendor seller brand retailer business provider hotel hotel_name "
    "airline carrier operator chain cafe bar bank app service payee company"
)
PLACE_KEYS = words_of(
    "place location venue cinema theater theatre address city district neighbourhood neighborhood area "
    "station airport gym destination origin from to pickup dropoff where street branch region country route"
)
REFERENCE_KEYS = words_of(
    "ref reference booking booking_ref booking_reference booking_code confirmation confirmation_code "
    "confirmation_number pnr ticket ticket_number order_number order_no reservation reservation_code code "
    "voucher tracking tracking_number invoice receipt receipt_number transaction card card_number account "
    "account_number iban seat flight flight_number plate license_plate"
)
ID_KEYS = words_of("id asin sku isbn upc ean user uid reviewerid reviewer_id")
PERSON_KEYS = words_of(
    "name person full_name first_name last_name given_name family_name surname middle_name maiden_name "
    "contact contact_name guest guest_name passenger passenger_name recipient customer_name driver_name "
    "reviewer_name reviewername companion friend host driver instructor trainer doctor sender spouse "
    "partner father mother child emergency_contact"
)
NICKNAME_KEYS = words_of("nickname nick alias handle username user_name screen_name display_name login")
EMPLOYER_KEYS = words_of(
    "employer company_name workplace work office organisation organization org school university "
    "college job job_title department team"
)
BIRTH_KEYS = words_of("birthdate birth_date birthday date_of_birth dob born birth")
CONTACT_KEYS = words_of(
    "phone mobile cell tel telephone phone_number mobile_phone email e_mail mail home_address "
    "street_address postcode zip zip_code postal_code id_number id_card national_id ssn passport "
    "passport_number licence license ip ip_address device_id"
)
# Descriptive fields: their values are categories, not identifiers; only their rare words are secrets.
DESCRIPTOR_KEYS = words_of(
    "genres genre category categories cuisine format style color colour size language type kind tags tag "
    "rating stars score quantity qty currency unit device mode class cabin payment payment_method method "
    "channel_type verified duration price amount cost total status platform year"
)

CUES: Mapping[str, frozenset[str]] = {
    "title": words_of(
        "watch watched watching rewatch rewatched see saw seen stream streamed streaming film movie "
        "show series episode album song track record listen listened listening to play played playing "
        "read reading book bought buy buying order ordered purchase purchased rent rented review "
        "reviewed rate rated titled called named of"
    ),
    "merchant": words_of("at from via with by ordered order bought shop shopping visit visited"),
    "place": words_of("at in near to from via around visit visited towards"),
    "employer": words_of("at for with joined works work working employer company"),
    "name": words_of(
        "with and meet met call called text texted visit visited friend partner wife husband son "
        "daughter mum mom dad brother sister boss colleague for by named"
    ),
    "id": words_of("user id uid user_id reviewer customer member account no number #"),
}
CUES = {**CUES, "nickname": CUES["name"], "reference": CUES["id"]}
QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb", "*": "*", "`": "`"}
WORD = re.compile(r"[^\W_]+", re.UNICODE)
DIGIT_RUN = re.compile(r"(?<![\w])\d(?:[ .\-/()]?\d)+(?![\w])")
YEAR_AFTER = re.compile(r"\s*\((?:19|20)\d\d\)")
STOPWORDS = words_of("a an the of and or in on at to for with my your our his her its de la le el")


@lru_cache(maxsize=200_000)
def zipf(word: str) -> float:
    """Zipf frequency of an English word (0 for words wordfreq has never seen)."""
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word.lower(), "en"))


def fold_key(name: str) -> str:
    """A field or column name as lower_snake_case (``"First Name"`` and ``first-name`` are ``first_name``).

    The one fold every allowlist and field table of the synthesis path compares keys in.
    """
    return re.sub(r"[^a-z0-9]+", "_", name.strip().lower()).strip("_")


def field_kind(key: str) -> str | None:
    """The kind of a record field's values by the field's key (None: a descriptor, not an identifier)."""
    k = fold_key(key)
    tables = (
        ("title", TITLE_KEYS),
        ("merchant", MERCHANT_KEYS),
        ("place", PLACE_KEYS),
        ("reference", REFERENCE_KEYS),
        ("name", PERSON_KEYS),
        ("nickname", NICKNAME_KEYS),
        ("employer", EMPLOYER_KEYS),
        ("contact", CONTACT_KEYS),
        ("birthdate", BIRTH_KEYS),
    )
    for kind, keys in tables:
        if k in keys:
            return kind
    if k in ID_KEYS or k.endswith("_id") or k.endswith("_no"):
        return "id"
    if k.endswith("_title") or (k.endswith("_name") and not k.startswith(("first", "last"))):
        return "title"
    if k in DESCRIPTOR_KEYS:
        return None
    return "field"


def extra_kind(key: str) -> str:
    """The kind of a demographic extra by its key (anything unknown is ``demographic``)."""
    kind = field_kind(key)
    return "demographic" if kind in (None, "field", "title") else kind


def is_code(token: str) -> bool:
    """Letters and digits mixed (PNRCANARY99, B00FIXM001), or a long digit run."""
    letters, digits = any(c.isalpha() for c in token), any(c.isdigit() for c in token)
    return (letters and digits and len(token) >= 4) or (digits and not letters and len(token) >= ID_DIGITS)


def is_rare(token: str) -> bool:
    if is_code(token):
        return True
    return token.isalpha() and len(token) >= 3 and zipf(token) < RARE_ZIPF


def distinctive(words: Sequence[str]) -> bool:
    """Whether a string of these (folded) words identifies wherever it appears."""
    content = [w for w in words if w not in STOPWORDS]
    if any(is_rare(w) for w in words):
        return True
    alpha = [w for w in content if w.isalpha()]
    has_year = any(w.isdigit() and len(w) == 4 for w in words)
    if has_year and alpha:
        return True
    if len(alpha) >= 3:
        return True
    return len(alpha) == 2 and min(zipf(w) for w in alpha) < UNCOMMON_ZIPF


def is_uncommon_pair(words: tuple[str, ...]) -> bool:
    return (
        all(w.isalpha() and w not in STOPWORDS for w in words) and min(zipf(w) for w in words) < UNCOMMON_ZIPF
    )


def fold_words(text: str) -> tuple[str, ...]:
    return tuple(w.lower() for w in WORD.findall(text))
