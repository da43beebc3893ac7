"""Check, before any test runs, that the shipped local model loads and decodes one token.

The check runs in a child process, so a llama.cpp build that uses instructions
this CPU lacks (``Illegal instruction``) is reported as one line, not a core
dump in the middle of the test suite.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

CHILD = """
from recworld.models.llamacpp import resolve_model_path
import llama_cpp
llm = llama_cpp.Llama(str(resolve_model_path("smollm2-135m")), n_ctx=256, n_threads=1,
                      n_threads_batch=1, verbose=False)
out = llm.create_completion("Hello", max_tokens=1, temperature=0.0)
assert out["choices"][0]["text"] is not None
"""


def main() -> int:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD], check=False, capture_output=True, text=True, timeout=300
    )
    took = time.monotonic() - started
    if proc.returncode == 0:
        print(f"local model check: SmolLM2-135M loads and decodes a token ({took:.1f} s)")
        return 0
    if proc.returncode == -signal.SIGILL:
        print(
            "local model check FAILED: llama-cpp-python crashed with 'Illegal instruction' "
            "(built for another CPU). Rebuild it portably: make distclean && make test",
            file=sys.stderr,
        )
    else:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"local model check FAILED (exit {proc.returncode}): {last}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
