"""How LUNAR asks models: schema-validated calls through the shared Runner, and the failure policy.

* :mod:`~recworld.lunar.llm.config`: :class:`SessionConfig` (one model: its backend's
  :class:`~recworld.models.ModelConfig` and the Runner's
  :class:`~recworld.runner.RunnerConfig`, nested) and :class:`EmbedderConfig`;
* :mod:`~recworld.lunar.llm.session`: a session opened as a cached Runner behind a
  :class:`StructuredLLM`, and an embedder opened with its vector cache;
* :mod:`~recworld.lunar.llm.structured`: :class:`StructuredLLM`, :class:`FailureRecord`;
* :mod:`~recworld.lunar.llm.decoding`: the decoding schemas (compact, narrowed enums);
* :mod:`~recworld.lunar.llm.tracking`: pieces asked and answered, for progress and Ctrl-C;
* :mod:`~recworld.lunar.llm.policy`: the failure summary and exit 3;
* :mod:`~recworld.lunar.llm.embed`: text embedders and their SQLite vector cache;
* :mod:`~recworld.lunar.llm.plan`: what a dry run reports per stage, and its price.
"""

from recworld.lunar.llm.structured import FailureRecord, StructuredLLM, failures_json, gather_or_cancel

__all__ = ["FailureRecord", "StructuredLLM", "failures_json", "gather_or_cancel"]
