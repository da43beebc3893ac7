"""Cross-harness check: lm-eval on our export and ``recworld eval`` agree on the same GGUF and questions.

lm-eval and inspect_ai live in their own venv (tests/helpers/export_harness.py); RecWorld
never imports them. The model is Gemma 3 270M (base, GGUF) behind a
loopback ``/v1/completions`` endpoint that answers as ``llama_cpp.server`` does, without its
``logits_all`` cost. lm-eval's own API models need echoed prompt log-probs, which
llama-cpp-python 0.3.36's server computes far too slowly (and
misaligns without a BOS token), so lm-eval runs with a small model class that
reads first-token log-probs from the endpoint (docs/export.md has the detail).
Gemma's GGUF adds a BOS and has no chat template, so both harnesses score the
same completion prompt and the same " A".." D" continuations.
"""

from __future__ import annotations

import ctypes
import http.server
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from helpers.cli import run_recworld
from helpers.export_harness import offline_env
from recworld.export.run import export_suite

pytestmark = [pytest.mark.slow, pytest.mark.model]

MEASURE = "kg_movie_genre"
TASK = f"recworld_ml_100k_{MEASURE}"
MODEL = "gemma3-270m"
TOLERANCE = 0.02
# Questions compared; every choice must match. Each costs a prompt evaluation in both harnesses
# (about 3 s each on 2 busy cores).
N_QUESTIONS = 10


@pytest.fixture(scope="session")
def harness(harness_python: Path) -> Path:
    """The harness venv's python (tests/conftest.py builds it on first use; no build, no test)."""
    return harness_python


class _FirstTokenLogprobs(http.server.BaseHTTPRequestHandler):
    """``POST /v1/completions`` with ``max_tokens=1``: the first token's top log-probs, as llama_cpp.server.

    llama_cpp.server gives log-probs only with ``logits_all``, which computes Gemma's 262k-wide
    output layer for every prompt token (about 10 s a prompt on 2 busy cores). Here the prompt is
    tokenized as that server does (BOS, special tokens parsed), evaluated by llama-cpp-python's own
    ``Llama.eval``, and only the last position's logits are read: the same reply for a tenth of the work.
    """

    llm: Any = None
    lock = threading.Lock()

    def do_POST(self) -> None:
        import llama_cpp

        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        assert body["max_tokens"] == 1 and body["temperature"] == 0, body
        llm = self.llm
        with self.lock:
            tokens = llm.tokenize(body["prompt"].encode("utf-8"), add_bos=True, special=True)
            llm.reset()
            llm.eval(tokens)
            last = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1)
            row = ctypes.cast(last, ctypes.POINTER(ctypes.c_float))
            logits = np.ctypeslib.as_array(row, shape=(llm.n_vocab(),)).astype(np.float64)
        logprobs = logits - logits.max()
        logprobs -= np.log(np.exp(logprobs).sum())
        ranked = [int(i) for i in np.argsort(-logprobs, kind="stable")[: int(body["logprobs"])]]
        text = [llm.detokenize([i]).decode("utf-8", errors="ignore") for i in ranked]
        # As llama_cpp.server builds it: best first (a later token with the same text replaces an
        # earlier one), then the generated token, the best at temperature 0, once more.
        top = {t: float(logprobs[i]) for t, i in zip(text, ranked, strict=True)}
        top[text[0]] = float(logprobs[ranked[0]])
        reply = json.dumps({"choices": [{"logprobs": {"top_logprobs": [top]}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def gguf_server() -> Iterator[str]:
    """The GGUF behind a loopback ``/v1/completions`` endpoint (a thread of this process)."""
    import llama_cpp

    from recworld.models.llamacpp import resolve_model_path

    path = str(resolve_model_path(MODEL))
    llm = llama_cpp.Llama(path, n_ctx=2048, n_threads=2, n_threads_batch=2, logits_all=False, verbose=False)
    handler = type("Handler", (_FirstTokenLogprobs,), {"llm": llm})
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
        llm.close()


# lm-eval's built-in API models score by echoing the prompt's log-probs. llama_cpp.server computes
# those with a Python sort over the whole vocabulary per prompt token (about 30 s per request for
# Gemma's 262k vocabulary) and misaligns them when the prompt does not start with BOS. Every option
# label is one token here, so this lm-eval model reads the first generated token's log-probs from
# the endpoint instead: lm-eval still builds the requests (prompt, delimiter, choices) and the score.
_LM_EVAL_DRIVER = """
import json, math, sys, urllib.request
import lm_eval
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from lm_eval.tasks import TaskManager

@register_model("first-token-server")
class FirstToken(LM):
    def __init__(self, base_url, top=40, **_):
        super().__init__()
        self.url, self.top = base_url, int(top)

    def loglikelihood(self, requests, disable_tqdm=False):
        out, asked = [], {}
        for request in requests:
            context, continuation = request.args
            if context not in asked:  # every option of a question has its context: one request for them
                body = {"prompt": context, "max_tokens": 1, "logprobs": self.top, "temperature": 0}
                req = urllib.request.Request(self.url + "/v1/completions", json.dumps(body).encode(),
                                             {"Content-Type": "application/json"})
                reply = json.load(urllib.request.urlopen(req, timeout=300))
                asked[context] = reply["choices"][0]["logprobs"]["top_logprobs"][0]
            top = asked[context]
            # Below the top-k: lower than every listed option, so it can never be the argmax.
            out.append((float(top.get(continuation, -math.inf)), continuation == max(top, key=top.get)))
        return out

    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError

    def generate_until(self, requests, disable_tqdm=False):
        raise NotImplementedError

url, include, task = sys.argv[1:4]
# Only the export's tasks: indexing lm-eval's ~14,000 built-in task files costs seconds, and the
# lm_eval command line (test_lm_eval_runs_both_variants_and_groups) loads the export beside them.
tasks = TaskManager(include_path=include, include_defaults=False)
res = lm_eval.simple_evaluate(model="first-token-server", model_args=f"base_url={url}", tasks=[task],
                              task_manager=tasks, log_samples=True, limit=int(sys.argv[4]))
picks = {}
for sample in res["samples"][task]:
    scores = [float(r[0]) for r in sample["filtered_resps"]]
    picks[sample["doc"]["id"]] = scores.index(max(scores))
print(json.dumps({"acc": res["results"][task]["acc,none"], "picks": picks}))
"""


def _lm_eval_accuracy(python: Path, export: Path, url: str, tmp: Path) -> tuple[float, dict[str, int]]:
    command = [str(python), "-c", _LM_EVAL_DRIVER, url, str(export), TASK, str(N_QUESTIONS)]
    done = subprocess.run(
        command, env=offline_env(tmp), capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return float(result["acc"]), {str(k): int(v) for k, v in result["picks"].items()}


def _recworld_accuracy(suite: Path, tmp: Path) -> tuple[float, dict[str, int]]:
    run = tmp / "recworld-run"
    argv = ["eval", str(suite), "--model", f"llamacpp:{MODEL}", "--mode", "loglik"]
    argv += ["--measures", MEASURE, "--out", str(run), "--concurrency", "1", "--no-progress"]
    argv += ["--limit", str(N_QUESTIONS)]
    ran = run_recworld(*argv)
    assert ran.returncode == 0, ran.stderr
    rows = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == N_QUESTIONS and all(r["error"] is None for r in rows)
    return sum(bool(r["correct"]) for r in rows) / len(rows), {
        r["question_id"]: r["parsed_index"] for r in rows
    }


def test_lm_eval_and_recworld_agree_in_loglik(
    harness: Path, ml100k_suite: Path, gguf_server: str, tmp_path: Path
) -> None:
    export = tmp_path / "lm-eval"
    export_suite(ml100k_suite, "lm-eval", export, measures=(MEASURE,))
    started = time.perf_counter()
    theirs, their_picks = _lm_eval_accuracy(harness, export, gguf_server, tmp_path)
    ours, our_picks = _recworld_accuracy(ml100k_suite, tmp_path)
    same = sum(their_picks[q] == our_picks[q] for q in our_picks)
    print(
        f"\nagreement on {len(our_picks)} {MEASURE} questions: lm-eval acc {theirs:.3f}, "
        f"recworld acc {ours:.3f}, same choice on {same}/{len(our_picks)} "
        f"({time.perf_counter() - started:.0f} s)"
    )
    assert set(their_picks) == set(our_picks)
    assert abs(theirs - ours) <= TOLERANCE
    assert same == len(our_picks), "the two harnesses chose differently on some questions"


def test_inspect_runs_the_export_with_mockllm(harness: Path, ml100k_suite: Path, tmp_path: Path) -> None:
    """Plumbing: inspect loads the task file, runs every sample and scores the reply with our pattern."""
    export = tmp_path / "inspect"
    export_suite(ml100k_suite, "inspect", export, measures=(MEASURE,))
    # mockllm counts tokens with tiktoken (a download) unless an output carries usage: give it scripted ones.
    driver = f"""
import json, sys
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
out = ModelOutput.from_content("mockllm/model", "The answer is (B).")
out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
model = get_model("mockllm/model", custom_outputs=[out] * 50)
[log] = eval("{export / "recworld_inspect.py"}@{TASK}", model=model, log_dir="{tmp_path / "logs"}",
             log_format="json", display="none")
print(json.dumps({{"status": log.status, "samples": len(log.samples),
    "accuracy": log.results.scores[0].metrics["accuracy"].value}}))
"""
    done = subprocess.run(
        [str(harness), "-c", driver],
        env=offline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    answers = [json.loads(line)["answer"] for line in (export / "data" / f"{MEASURE}.jsonl").open()]
    assert result["status"] == "success" and result["samples"] == 50
    assert result["accuracy"] == pytest.approx(answers.count("B") / 50)


def test_lm_eval_runs_both_variants_and_groups(harness: Path, ml100k_suite: Path, tmp_path: Path) -> None:
    """Plumbing: every exported task and group loads and runs (lm-eval's dummy model answers)."""
    export = tmp_path / "lm-eval"
    export_suite(ml100k_suite, "lm-eval", export)
    # One run may not hold a task twice, so the scale groups here are the generate ones.
    tasks = "recworld_ml_100k,recworld_ml_100k_knowledgeability_gen,recworld_ml_100k_personalization_gen"
    command = [str(harness), "-m", "lm_eval", "--model", "dummy", "--include_path", str(export)]
    command += ["--tasks", tasks, "--limit", "3", "--output_path", str(tmp_path / "out")]
    done = subprocess.run(
        command, env=offline_env(tmp_path), capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(next((tmp_path / "out").rglob("results_*.json")).read_text())["results"]
    for name in ("recworld_ml_100k_kg_movie_genre", "recworld_ml_100k_mem_item_item_gen"):
        assert name in results


def test_datasets_loads_each_config(harness: Path, ml100k_suite: Path, tmp_path: Path) -> None:
    export = tmp_path / "hf"
    export_suite(ml100k_suite, "hf", export)
    configs = ("mem_item_item", "kg_movie_genre")
    code = (  # one interpreter loads every config (importing datasets is most of the cost)
        "import datasets, json, sys\nfor c in sys.argv[2:]:\n    d = datasets.load_dataset(sys.argv[1], c)\n"
        "    print(json.dumps([d['test'].num_rows, d['test'][0]['answer'], d['test'][0]['prompt'][:40]]))"
    )
    done = subprocess.run(
        [str(harness), "-c", code, str(export), *configs],
        env=offline_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()[-len(configs) :]
    first = json.loads((export / "recworld-export.json").read_text())
    for config, line in zip(configs, lines, strict=True):
        rows, answer, prompt = json.loads(line)
        assert rows == first["counts"][config] == 50
        assert answer in "ABCDEFGHIJ" and prompt
