"""Which column is what: the allowlist schema every anchor value passes before any prompt.

Invariant: a column reaches synthesis only when the schema of its source types it; an
unknown column is dropped, and its name (never its values) is reported.

Four types (``ColumnType``): an **identifier** names a person, a place or a thing (a
name, an e-mail, a phone, a booking reference, an employer, a source id, a merchant, a
venue, a title) and is dropped or replaced by a surrogate (``Surrogate``); a
**quasi-identifier** (age, location, a time written in a field, an amount) is generalised;
a **behaviour** column (a genre, a cuisine, a rating) is kept as it is; **free text** (notes,
a review) goes through a PII detector (:mod:`recworld.lunar.privacy.freetext`) or is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from recworld.lunar.leaks import fold_key


class ColumnType(StrEnum):
    IDENTIFIER = "identifier"
    QUASI = "quasi-identifier"
    BEHAVIOUR = "behaviour"
    FREE_TEXT = "free text"


class Surrogate(StrEnum):
    """What replaces an identifier, or how a quasi-identifier is generalised."""

    DROP = "drop"
    PERSON = "person"  # a Faker name, the same one for the same value of one user
    COMPANY = "company"  # a Faker company name
    VENUE = "venue"  # a category surrogate of the record's domain ("a grill restaurant")
    ITEM = "item"  # a category surrogate from the record's genres or category ("a drama film")
    KEEP = "keep"  # behaviour: kept as it is
    AGE_BAND = "age band"
    REGION = "region"
    ROUND = "round"  # an amount: rounded to two significant digits
    PRESIDIO = "presidio"  # free text: PII replaced by surrogates


@dataclass(frozen=True)
class Column:
    type: ColumnType
    surrogate: Surrogate


def _cols(kind: ColumnType, surrogate: Surrogate, names: str) -> dict[str, Column]:
    return {n: Column(kind, surrogate) for n in names.split()}


_ID, _QUASI, _BEHAVIOUR, _TEXT = ColumnType
# Record fields (keys folded to lower_snake_case). Everything not here is dropped and reported.
EVENT_COLUMNS: dict[str, Column] = {
    **_cols(
        _ID,
        Surrogate.DROP,
        "id uid user user_id asin sku isbn upc ean email e_mail mail phone mobile tel telephone "
        "phone_number ssn passport id_number national_id ref reference booking booking_ref "
        "booking_reference booking_code confirmation confirmation_code confirmation_number pnr "
        "ticket ticket_number order order_id order_number order_no reservation reservation_code "
        "code voucher tracking tracking_number invoice receipt receipt_number transaction "
        "transaction_id card card_number account account_number iban seat flight flight_number "
        "plate license_plate address street ip device device_id url brand",
    ),
    **_cols(
        _ID,
        Surrogate.PERSON,
        "name person full_name contact contact_name guest guest_name passenger passenger_name "
        "recipient customer_name driver driver_name reviewer_name companion friend with host",
    ),
    **_cols(_ID, Surrogate.COMPANY, "employer company"),
    **_cols(
        _ID,
        Surrogate.VENUE,
        "merchant store shop restaurant vendor seller retailer business provider hotel hotel_name "
        "airline carrier operator chain cafe bar bank app service payee place location venue cinema "
        "theater theatre city district neighbourhood neighborhood area station airport gym "
        "destination origin from to pickup dropoff where branch route",
    ),
    **_cols(
        _ID,
        Surrogate.ITEM,
        "title movie film show series episode song track album artist book item item_name product "
        "product_name game podcast channel playlist dish",
    ),
    **_cols(_QUASI, Surrogate.ROUND, "amount price total cost fare fee tip"),
    **_cols(
        _BEHAVIOUR,
        Surrogate.KEEP,
        "genres genre category categories cuisine style format rating stars overall score "
        "quantity qty items party_size nights duration distance mode class payment_method status",
    ),
    **_cols(
        _TEXT,
        Surrogate.PRESIDIO,
        "notes note comment comments review review_text text description summary message",
    ),
}
# Demographic columns beyond age, gender, occupation, location and timezone (``Demographic.extra``).
USER_COLUMNS: dict[str, Column] = {
    **_cols(
        _ID,
        Surrogate.DROP,
        "name nickname full_name first_name last_name surname email e_mail mail phone mobile tel "
        "telephone phone_number address street street_address home_address ssn passport id_number "
        "national_id birthdate birth_date dob birthday contact employer company username handle",
    ),
    **_cols(_QUASI, Surrogate.AGE_BAND, "age"),
    **_cols(_QUASI, Surrogate.REGION, "location zip zipcode postcode"),
    **_cols(_TEXT, Surrogate.PRESIDIO, "notes note bio about description comment comments"),
}
# Source-specific additions: a source may type more columns (none differ today).
SOURCE_COLUMNS: dict[str, dict[str, Column]] = {}


def event_column(key: str, source: str = "") -> Column | None:
    """The type of a record field of ``source``; None: not in the allowlist (dropped, reported)."""
    name = fold_key(key)
    return SOURCE_COLUMNS.get(source, {}).get(name) or EVENT_COLUMNS.get(name)


def user_column(key: str) -> Column | None:
    """The type of a demographic extra column; None: not in the allowlist (dropped, reported)."""
    return USER_COLUMNS.get(fold_key(key))
