"""Portable vs native llama-cpp-python builds: generate and prompt (loglik) throughput, side by side.

``make`` builds llama-cpp-python portably (``scripts/build-llama.sh``: AVX2/FMA/F16C,
no AVX-512, no AMX), because a native build crashed with ``Illegal instruction``
on a VM whose CPU advertises AMX. This bench measures what portability costs
on the machine it runs on. It builds a native wheel once into ``--native-dir``
(about 5 minutes on 2 cores), installs it into a private folder, and then
alternates child processes that import one build or the other:

* ``generate``: greedy completion tokens per second (SmolLM2-135M, 32 new tokens);
* ``prompt``: prompt-processing tokens per second, which is what ``--mode loglik``
  spends its time on (the shared prefix is evaluated once, then one token per choice).

It prints the median of ``--rounds`` rounds for each build and the ratio
portable / native (above 1.0: the portable build is faster).

Usage: python bench/bench_llama_build.py [--native-dir /tmp/llama-native] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

VERSION = "0.3.36"
PROMPTS = [
    f"Question {i}: a user watched Toy Story, Heat, Fargo and Casablanca. Which genre fits "
    f"the movie number {i} best? A. Comedy B. Drama C. Horror D. Western. Answer with one letter."
    for i in range(8)
]

CHILD = r"""
import json, sys, time
import llama_cpp
from recworld.models.llamacpp import resolve_model_path
llm = llama_cpp.Llama(str(resolve_model_path("smollm2-135m")), n_ctx=512, n_threads=2,
                      n_threads_batch=2, verbose=False)
prompts = json.loads(sys.argv[1])
gen_tokens = gen_time = pp_tokens = pp_time = 0.0
for text in prompts:
    tokens = llm.tokenize(text.encode())
    llm.reset()
    t0 = time.perf_counter(); llm.eval(tokens); pp_time += time.perf_counter() - t0
    pp_tokens += len(tokens)
    t0 = time.perf_counter()
    out = llm.create_completion(text, max_tokens=32, temperature=0.0)
    gen_time += time.perf_counter() - t0
    gen_tokens += out["usage"]["completion_tokens"]
info = llama_cpp.llama_print_system_info().decode()
print(json.dumps({"generate": gen_tokens / gen_time, "prompt": pp_tokens / pp_time, "info": info}))
"""


def native_lib(native_dir: Path, pip: str) -> Path:
    """A folder holding a natively built llama_cpp package, built once."""
    lib = native_dir / "lib"
    if (lib / "llama_cpp").is_dir():
        return lib
    wheels = sorted(native_dir.glob(f"llama_cpp_python-{VERSION}-*.whl"))
    if not wheels:
        print("building a native llama-cpp-python wheel (about 5 minutes)", file=sys.stderr)
        env = {**os.environ, "CMAKE_ARGS": "-DGGML_NATIVE=ON -DLLAVA_BUILD=OFF"}
        subprocess.run(
            [pip, "wheel", "--quiet", "--no-deps", "--no-cache-dir", "--no-binary", "llama-cpp-python",
             "-w", str(native_dir), f"llama-cpp-python=={VERSION}"],
            check=True, env=env,
        )  # fmt: skip
        wheels = sorted(native_dir.glob(f"llama_cpp_python-{VERSION}-*.whl"))
    subprocess.run([pip, "install", "--quiet", "--no-deps", "--target", str(lib), str(wheels[0])], check=True)
    return lib


def measure(lib: Path | None) -> dict[str, float | str]:
    env = dict(os.environ)
    if lib is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(lib), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(PROMPTS)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"child failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    result: dict[str, float | str] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--native-dir", type=Path, default=Path("/tmp/llama-native"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    pip = str(Path(sys.executable).with_name("pip"))
    lib = native_lib(args.native_dir, pip)
    runs: dict[str, list[dict[str, float | str]]] = {"portable": [], "native": []}
    for round_ in range(args.rounds):
        order = ["portable", "native"] if round_ % 2 == 0 else ["native", "portable"]
        for name in order:
            runs[name].append(measure(None if name == "portable" else lib))
    for name, results in runs.items():
        print(f"{name}: {results[0]['info'].strip()}")
    print(
        f"{'metric':<10} {'portable':>10} {'native':>10} {'portable/native':>16}  (median of {args.rounds})"
    )
    for metric in ("generate", "prompt"):
        med = {n: statistics.median(float(r[metric]) for r in rs) for n, rs in runs.items()}
        ratio = med["portable"] / med["native"]
        print(f"{metric:<10} {med['portable']:>10.1f} {med['native']:>10.1f} {ratio:>16.2f}   tokens/s")


if __name__ == "__main__":
    main()
