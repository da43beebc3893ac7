"""Time lm-eval's ``local-chat-completions`` on given prompts (run inside the lm-eval venv).

    python _lmeval_driver.py BASE_URL TEXTS.json CONCURRENCY

Prints one JSON line: {"seconds": ..., "n": ...}. Only ``generate_until`` is
timed; importing lm-eval is not. Called by ``bench_runner.py``.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    base_url, texts_file, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3])
    from lm_eval.api.instance import Instance
    from lm_eval.models.api_models import JsonChatStr
    from lm_eval.models.openai_completions import LocalChatCompletion

    with open(texts_file, encoding="utf-8") as handle:
        texts: list[str] = json.load(handle)
    lm = LocalChatCompletion(
        model="noop",
        base_url=f"{base_url}/chat/completions",
        num_concurrent=concurrency,
        max_retries=1,
        tokenized_requests=False,
        tokenizer_backend=None,
    )
    gen_kwargs = {"until": [], "max_gen_toks": 16, "do_sample": False}
    requests = [
        Instance(
            request_type="generate_until",
            doc={},
            arguments=(JsonChatStr(json.dumps([{"role": "user", "content": t}])), dict(gen_kwargs)),
            idx=i,
        )
        for i, t in enumerate(texts)
    ]
    start = time.perf_counter()
    answers = lm.generate_until(requests, disable_tqdm=True)
    seconds = time.perf_counter() - start
    if sum(a == "B" for a in answers) != len(texts):
        raise SystemExit(f"unexpected answers: {answers[:5]}")
    print(json.dumps({"seconds": seconds, "n": len(texts)}))


if __name__ == "__main__":
    main()
