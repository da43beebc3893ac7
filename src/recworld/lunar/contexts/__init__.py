"""Context settings: what the answering model sees about the user, one module per setting.

=========  ===========================================================================
none       nothing: the no-personalisation floor (:mod:`.none`)
full       profile + all records; if they do not fit the answer model's window, the
           newest records that fit, counted in that model's tokens; what was dropped
           is recorded per query and reported (:mod:`.full`)
curated    the rubric's evidence records only, the ideal retriever (:mod:`.curated`)
rag        records as text lines, embedded; the top-k (30) by cosine (:mod:`.rag`)
memory     agentic memory: atomic facts distilled from batches of 10 records, kept in
           Qdrant, top-k (50) by the query (:mod:`.memory`)
=========  ===========================================================================

The interface and the registry are in :mod:`.base`. A setting is registered here
with one line; a plugin (or a test) registers its own class the same way.
"""

from recworld.lunar.contexts.base import (
    ContextEnv,
    ContextSetting,
    Coverage,
    Preparation,
    context_setting,
    default_contexts,
    missing_parts,
    register_context,
    registered,
    unregister_context,
)
from recworld.lunar.contexts.curated import CuratedContext
from recworld.lunar.contexts.full import FullContext
from recworld.lunar.contexts.memory import MemoryContext
from recworld.lunar.contexts.none import NoContext
from recworld.lunar.contexts.rag import RagContext
from recworld.lunar.contexts.roles import RoleSpec, Sessions

register_context(NoContext)
register_context(FullContext)
register_context(CuratedContext)
register_context(RagContext)
register_context(MemoryContext)

__all__ = [
    "ContextEnv",
    "ContextSetting",
    "Coverage",
    "CuratedContext",
    "FullContext",
    "MemoryContext",
    "NoContext",
    "Preparation",
    "RagContext",
    "RoleSpec",
    "Sessions",
    "context_setting",
    "default_contexts",
    "missing_parts",
    "register_context",
    "registered",
    "unregister_context",
]
