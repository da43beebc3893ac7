"""``--retry-failures``: ask a request again past the response cache, and keep the new reply.

The runner caches every reply that arrived, including those LUNAR then rejected
(unparsable JSON, a failed check), so a rerun replays the same bad reply and the
piece fails again without a request being sent. :class:`FreshRunner` wraps the
runner: ``complete`` is the runner's (cache first), ``complete_fresh`` sends through
a cacheless runner on the same model and then stores the new reply under the same
cache key (:func:`recworld.runner.cache.cache_key`), replacing the rejected one.
:class:`~recworld.lunar.llm.StructuredLLM` calls it only for a cached reply it rejected.
"""

from __future__ import annotations

from typing import Any

from recworld.chat import Request
from recworld.runner import Completion, Runner, cache_key


class FreshRunner:
    """A :class:`Runner` plus ``complete_fresh``; ``model`` and ``stats`` are the runner's."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        # Same model and settings, no cache: its reads can never replay the rejected reply.
        # It borrows the runner's model (owns_model=False): whoever opened the runner closes it.
        self._direct = Runner(runner.model, runner.config, cache=None, owns_model=False)
        self.refreshed = 0

    @property
    def model(self) -> Any:
        return self.runner.model

    @property
    def stats(self) -> Any:
        return self.runner.stats

    async def complete(self, request: Request) -> Completion:
        return await self.runner.complete(request)

    async def complete_fresh(self, request: Request) -> Completion:
        """Send ``request`` whatever the cache holds; a reply that arrives overwrites the cached one."""
        self.refreshed += 1
        completion = await self._direct.complete(request)
        cache = self.runner.cache
        if completion.response is not None and cache is not None:
            cache.put(
                cache_key(self.runner.model.identity, request), completion.response, completion.latency_s
            )
        return completion

    async def aclose(self) -> None:
        """Wait for the sends past the cache still in flight; the wrapped runner is closed by its opener."""
        await self._direct.aclose()
