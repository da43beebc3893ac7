"""LUNAR folders written record by record, for report tests: every edge a reader can meet.

:func:`write_folder` writes what ``lunar synth``, ``lunar queries`` and ``lunar eval``
write, with the records' own classes, so a test picks exact scores (n = 1, a model whose
answers all failed, no privacy judgments, a hostile model name) without running a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from helpers.lunar import tiny_run
from recworld.io import atomic_write_jsonl, mark_output_dir
from recworld.lunar.config import RUN_KIND, LunarEvalConfig, SynthConfig
from recworld.lunar.judges.personalization import Judgment
from recworld.lunar.judges.privacy import OffenceItem, PrivacyJudgment
from recworld.lunar.llm.config import SessionConfig
from recworld.lunar.schemas import Category, EvidenceSet, Query, Rubric
from recworld.lunar.store import dataset as store
from recworld.lunar.store.outputs import (
    AnswerRecord,
    EvalCounts,
    EvalRun,
    RealStats,
    SynthCounts,
    SynthManifest,
)
from recworld.paths import slug

# One answer: (pc, pd) judged; "failed": the answer failed (floor row); "judge-error": the judge failed.
Answer = tuple[int, int] | str


@dataclass
class RunSpec:
    model: str
    context: str
    answers: Sequence[Answer]
    privacy: Sequence[int | None] | None = None  # one score per answer (None: judge error); None: no file
    offences: dict[int, list[str]] = field(default_factory=dict)  # answer index -> offence kinds
    judge: str = "openai:judge"
    answer_text: str = "Try the ramen place you liked."


def query_id(n: int) -> str:
    return f"user-000/q{n}"


def write_queries(root: Path, n: int, *, text: str = "Where should I eat tonight?") -> None:
    queries, rubrics = [], []
    for i in range(n):
        qid = query_id(i)
        queries.append(
            Query(query_id=qid, user_id="user-000", text=text, domains=[Category.DINING], multi_domain=False)
        )
        rubrics.append(
            Rubric(
                query_id=qid,
                user_id="user-000",
                generic_answer="Any restaurant will do.",
                decisions=[],
                evidence=EvidenceSet(record_ids=["user-000/w0/d0/s0/r0"], domains=[Category.DINING]),
                effects=[],
                facts=["orders ramen in the evening"],
                points=["suggest a ramen place open late"],
            )
        )
    atomic_write_jsonl(root / "queries.jsonl", [q.to_json() for q in queries])
    atomic_write_jsonl(root / "rubrics.jsonl", [r.to_json() for r in rubrics])


def write_dataset(root: Path) -> None:
    """A synthesised-looking folder: profiles, trajectories, records, manifest and real statistics."""
    tiny_run(root, users=1)
    records = store.records(root)
    config = SynthConfig(anchors="lunar-demo", out_dir=root, llm=SessionConfig(model="openai:synth"))
    counts = SynthCounts(
        asked=5,
        failures=0,
        llm_calls=5,
        users=1,
        dropped_users=0,
        weeks=1,
        slots=7,
        records=len(records),
        anchors_used=1,
    )
    SynthManifest(config=config, counts=counts, timings={}).write(root / "manifest.json")
    RealStats(n=4, type={"order": 4}, hour={"19": 2, "21": 2}, weekday={"0": 4}).write(
        root / "real_stats.json"
    )


def _judgment(spec: RunSpec, i: int, answer: Answer) -> Judgment:
    qid = query_id(i)
    if answer == "failed":
        return Judgment(
            judge="personalization",
            query_id=qid,
            target_first=True,
            pc=1,
            pd=1,
            avg=1.0,
            answer_failed=True,
            rationale="no answer",
        )
    if answer == "judge-error":
        return Judgment(judge="personalization", query_id=qid, target_first=True, error="invalid JSON")
    assert isinstance(answer, tuple)
    pc, pd = answer
    return Judgment(
        judge="personalization",
        query_id=qid,
        target_first=i % 2 == 0,
        pc=pc,
        pd=pd,
        avg=(pc + pd) / 2,
        baseline_pc=2,
        baseline_pd=2,
        rationale=f"judged {i}",
    )


def _privacy(spec: RunSpec, i: int, answer: Answer) -> PrivacyJudgment:
    qid = query_id(i)
    if answer == "failed":
        return PrivacyJudgment(judge="privacy", query_id=qid, answer_failed=True, error="no answer")
    assert spec.privacy is not None
    score = spec.privacy[i]
    if score is None:
        return PrivacyJudgment(judge="privacy", query_id=qid, error="privacy judge output invalid")
    items = [
        OffenceItem(kind=k, quote="you tend to", analysis="labels the user") for k in spec.offences.get(i, [])
    ]  # type: ignore[arg-type]
    return PrivacyJudgment(judge="privacy", query_id=qid, score=score, offences=items)


def write_run(base: Path, spec: RunSpec, *, privacy_on: bool = True) -> Path:
    """``base/eval/<model>/<context>/`` as ``lunar eval`` writes it."""
    folder = base / "eval" / slug(spec.model) / spec.context
    answers = [
        AnswerRecord(
            query_id=query_id(i),
            model=spec.model,
            context=spec.context,
            prompt_chars=100,
            answer=None if a == "failed" else f"{spec.answer_text} ({i})",
            error="503 from the server" if a == "failed" else None,
        )
        for i, a in enumerate(spec.answers)
    ]
    judgments = [_judgment(spec, i, a) for i, a in enumerate(spec.answers)]
    atomic_write_jsonl(folder / "answers.jsonl", [a.to_json() for a in answers])
    atomic_write_jsonl(folder / "judgments.jsonl", [j.to_json() for j in judgments])
    privacy: list[PrivacyJudgment] = []
    if spec.privacy is not None:
        privacy = [_privacy(spec, i, a) for i, a in enumerate(spec.answers)]
        atomic_write_jsonl(folder / "privacy.jsonl", [p.to_json() for p in privacy])
    failed = sum(a == "failed" for a in spec.answers)
    counts = EvalCounts(
        asked=len(answers),
        failures=failed,
        llm_calls=len(answers),
        queries=len(answers),
        answered=len(answers) - failed,
        answer_errors=failed,
        judged=sum(j.error is None and not j.answer_failed for j in judgments),
        judge_errors=sum(j.error is not None for j in judgments),
        privacy_judged=sum(p.score is not None for p in privacy),
        privacy_errors=sum(p.error is not None and not p.answer_failed for p in privacy),
    )
    config = LunarEvalConfig(
        root=base,
        answer=SessionConfig(model=spec.model),
        judge=SessionConfig(model=spec.judge),
        contexts=(spec.context,),
        privacy=privacy_on and spec.privacy is not None,
    )
    EvalRun(
        model=spec.model, judge=spec.judge, context=spec.context, config=config, counts=counts, failures=[]
    ).write(folder / "run.json")
    return folder


def write_folder(
    root: Path, runs: Sequence[RunSpec], *, dataset: bool = True, privacy_on: bool = True
) -> Path:
    if dataset:
        write_dataset(root)
    else:  # a finished synth's folder whose dataset files have since gone
        mark_output_dir(root, RUN_KIND)
    write_queries(root, max((len(r.answers) for r in runs), default=1))
    for spec in runs:
        write_run(root, spec, privacy_on=privacy_on)
    return root


# -- reading report.html as a reader does ---------------------------------------------------


@dataclass
class Page:
    """What a reader sees: tables by id (header and cell texts), sections, notes, figures, viewer keys."""

    tables: dict[str, list[list[str]]] = field(default_factory=dict)
    views: dict[str, list[list[str]]] = field(default_factory=dict)  # table id -> data-view per cell
    sections: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)  # figure ids
    figure_text: dict[str, list[str]] = field(default_factory=dict)  # figure id -> its SVG's <text>s
    scripts: list[str] = field(default_factory=list)

    def table(self, key: str) -> list[dict[str, str]]:
        header, *rows = self.tables[key]
        return [dict(zip(header, row, strict=True)) for row in rows]


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self._table: str | None = None
        self._row: list[str] | None = None
        self._views: list[str] | None = None
        self._cell: list[str] | None = None
        self._note: list[str] | None = None
        self._svg_text: list[str] | None = None
        self._script: list[str] | None = None
        self._figure = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "table" and a.get("id"):
            self._table = a["id"]
            self.page.tables[self._table] = []
            self.page.views[self._table] = []
        elif tag == "tr" and self._table is not None:
            self._row, self._views = [], []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
            assert self._views is not None
            self._views.append(a.get("data-view", ""))
        elif tag == "section" and a.get("id"):
            self.page.sections.append(a["id"])
        elif tag == "p" and "note" in a.get("class", "").split():
            self._note = []
        elif tag == "figure" and a.get("id"):
            self.page.figures.append(a["id"])
            self._figure = a["id"]
            self.page.figure_text[self._figure] = []
        elif tag == "text":
            self._svg_text = []
        elif tag == "script":
            self._script = []

    def handle_data(self, data: str) -> None:
        for sink in (self._cell, self._note, self._svg_text, self._script):
            if sink is not None:
                sink.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            self.page.tables[self._table].append(self._row)
            assert self._views is not None
            self.page.views[self._table].append(self._views)
            self._row = None
        elif tag == "table":
            self._table = None
        elif tag == "p" and self._note is not None:
            self.page.notes.append(" ".join("".join(self._note).split()))
            self._note = None
        elif tag == "text" and self._svg_text is not None:
            self.page.figure_text.setdefault(self._figure, []).append("".join(self._svg_text))
            self._svg_text = None
        elif tag == "figure":
            self._figure = ""
        elif tag == "script" and self._script is not None:
            self.page.scripts.append("".join(self._script))
            self._script = None


def read_page(path: Path) -> Page:
    reader = _Reader()
    reader.feed(path.read_text(encoding="utf-8"))
    return reader.page
