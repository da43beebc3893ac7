"""Reports over runs with different coverage: every table read back from report.html and the two CSVs.

The suite holds what a researcher's ``SUITE/runs`` holds after a week: three full
zero-shot runs, the oracle, a ``--limit 2`` smoke test, a run stopped after one
failed request, and prompt-variant runs of other sizes. The full runs' averages
must stay on their full questions, the partial runs must be labelled with
their n, and the HTML, ``table.csv`` and ``metrics.csv`` must say the same.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.html_tables import HtmlTable, csv_rows, html_tables, leading_score
from helpers.synthetic_runs import (
    MOVIE_MEASURES,
    always_first,
    make_suite,
    never,
    perfect,
    skilled,
    write_run,
)
from recworld.report import write_report
from recworld.report.tables import fmt_interval
from recworld.scoring import load_samples, paired_comparison, score_samples
from recworld.scoring.thresholds import MIN_PAIRED_N

MEASURES = MOVIE_MEASURES[:6]
N = 40


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    suite = make_suite(tmp_path_factory.mktemp("mixed"))
    runs = suite / "runs"
    write_run(
        runs / "knn", model="itemknn", dataset="ml-100k", measures=MEASURES, policy=skilled(0.7), n=N, seed=1
    )
    write_run(
        runs / "pop",
        model="popularity",
        dataset="ml-100k",
        measures=MEASURES,
        policy=skilled(0.3),
        n=N,
        seed=2,
    )
    write_run(
        runs / "rnd", model="random", dataset="ml-100k", measures=MEASURES, policy=skilled(0.0), n=N, seed=3
    )
    write_run(runs / "oracle", model="oracle", dataset="ml-100k", measures=MEASURES, policy=perfect(), n=N)
    write_run(runs / "smol", model="llamacpp:smollm2-135m", dataset="ml-100k", measures=MEASURES,
              policy=always_first(), n=2, seed=4)  # fmt: skip
    write_run(runs / "gpt", model="openai:gpt-4o-mini", dataset="ml-100k", measures=MEASURES[:1],
              policy=perfect(), n=1, errors=1)  # fmt: skip
    # Variants of itemknn over fewer questions than its zero-shot run: 5 and 25 per measure.
    write_run(runs / "knn-cot", model="itemknn", dataset="ml-100k", measures=MEASURES, policy=skilled(0.7),
              n=5, seed=5, variant="cot")  # fmt: skip
    write_run(runs / "knn-noisy", model="itemknn", dataset="ml-100k", measures=MEASURES, policy=skilled(0.5),
              n=25, seed=6, variant="noisy")  # fmt: skip
    return suite, write_report([suite], suite / "report")


def _tables(written: dict[str, Path]) -> dict[str, HtmlTable]:
    return html_tables(written["html"])


def test_full_runs_keep_their_full_questions_in_every_average(mixed: tuple[Path, dict[str, Path]]) -> None:
    suite, written = mixed
    tables = _tables(written)
    scales = tables["scales-ml-100k"]
    # The primary averages hold the full runs and the oracle only, each on its own 240 questions.
    assert scales.labels() == ["RANDOM", "oracle", "itemknn", "popularity", "random"]
    for run, label in (("knn", "itemknn"), ("pop", "popularity"), ("rnd", "random")):
        own = score_samples(load_samples(suite / "runs" / run / "samples.jsonl")).overall
        assert own is not None and own.score is not None
        assert scales.cell(label, "all measures").text == fmt_interval(own.score, own.ci_low, own.ci_high, N)
    assert "6 measures × 40 questions" in written["markdown"].read_text(encoding="utf-8")


def test_partial_runs_have_their_own_averages_labelled_with_their_n(
    mixed: tuple[Path, dict[str, Path]],
) -> None:
    _, written = mixed
    tables = _tables(written)
    partial = [t for key, t in tables.items() if key.startswith("scales-ml-100k-partial-")]
    labels = sorted(label for t in partial for label in t.labels() if label != "RANDOM")
    assert labels == [
        "llamacpp:smollm2-135m (partial: 6 measures × 2 questions)",
        "openai:gpt-4o-mini (partial: 1 measure × 1 question)",
    ]
    main = tables["main-ml-100k"]
    smol = main.row("llamacpp:smollm2-135m (partial: 6 measures × 2 questions)")
    assert all(c.text.endswith("(n=2)") or c.text.endswith("(n=2) †") for c in smol[1:])
    assert not any(c.bold for c in smol)
    gpt = main.row("openai:gpt-4o-mini (partial: 1 measure × 1 question)")
    assert gpt[1].text == "errors: 1"  # every request failed: no score, never 0.000
    md = written["markdown"].read_text(encoding="utf-8")
    assert "> Partial runs: llamacpp:smollm2-135m (6 measures × 2 questions)" in md


def test_the_oracle_is_a_ceiling_never_bold_never_the_reference(mixed: tuple[Path, dict[str, Path]]) -> None:
    _, written = mixed
    tables = _tables(written)
    main = tables["main-ml-100k"]
    assert main.row_classes[1] == "ceiling" and main.rows[1][0].text == "oracle"
    assert not any(c.bold for c in main.row("oracle"))
    assert not any(c.bold for c in tables["scales-ml-100k"].row("oracle"))
    knn = main.row("itemknn")
    assert all(c.bold for c in knn[1:])  # the best competitor is bold, though the oracle scores more
    paired = tables["paired-ml-100k"]
    assert "against itemknn" in written["markdown"].read_text(encoding="utf-8")
    assert "oracle" not in paired.labels()


def test_paired_differences_use_shared_questions_and_need_a_minimum_n(
    mixed: tuple[Path, dict[str, Path]],
) -> None:
    suite, written = mixed
    paired = _tables(written)["paired-ml-100k"]
    smol = paired.row("llamacpp:smollm2-135m")
    assert smol[paired.columns.index("shared")].text == "12"
    for cell in smol[2:]:
        assert cell.text.endswith("(n=2)") and "*" not in cell.text and not cell.bold
        assert f"not tested below n = {MIN_PAIRED_N}" in cell.title
    # popularity against itemknn on their 40 shared questions per measure: the report's test is McNemar's.
    pop = load_samples(suite / "runs" / "pop" / "samples.jsonl")
    knn = load_samples(suite / "runs" / "knn" / "samples.jsonl")
    expected = paired_comparison(pop, knn)
    row = paired.row("popularity")
    for measure, entry in expected.measures.items():
        cell = row[paired.columns.index(_label(measure))]
        assert leading_score(cell.text) == pytest.approx(entry.diff, abs=5e-4)
        assert ("*" in cell.text) == entry.significant
        assert f"exact McNemar p = {entry.p_value:.3g}" in cell.title


def _label(measure: str) -> str:
    from recworld.report.tables import label

    return label(measure)


def test_table_csv_agrees_with_the_html(mixed: tuple[Path, dict[str, Path]]) -> None:
    _, written = mixed
    tables = _tables(written)
    main = tables["main-ml-100k"]
    rows = csv_rows(written["table_csv"])
    assert [r["model"] for r in rows] == [
        "RANDOM",
        "oracle",
        "itemknn",
        "popularity",
        "random",
        "llamacpp:smollm2-135m",
        "openai:gpt-4o-mini",
    ]  # one row per main-table row; the variants are not main rows
    by_label = {r[0].text.split(" (partial")[0]: r for r in main.rows}
    scale_rows = {
        label.split(" (partial")[0]: t.row(label)
        for key, t in tables.items()
        if key.startswith("scales-ml-100k")
        for label in t.labels()
        if label != "RANDOM"
    }
    for row in rows[1:]:
        html = by_label[row["model"]]
        assert row["coverage"] == ("partial" if "(partial" in html[0].text else "full")
        for measure in MEASURES:
            if row[measure]:
                assert (
                    html[main.columns.index(_label(measure))].text.split()[0] == f"{float(row[measure]):.3f}"
                )
        overall = scale_rows[row["model"]][-1].text
        if row["overall"]:
            assert overall.split()[0] == f"{float(row['overall']):.3f}"
        else:
            assert overall.startswith("errors:")
    assert {r["questions"] for r in rows if r["model"] in ("itemknn", "popularity")} == {str(6 * N)}


def test_metrics_csv_agrees_with_the_html(mixed: tuple[Path, dict[str, Path]]) -> None:
    _, written = mixed
    main = _tables(written)["main-ml-100k"]
    rows = csv_rows(written["metrics_csv"])
    by_label = {r[0].text.split(" (partial")[0]: r for r in main.rows}
    seen = 0
    for row in rows:
        if row["role"] not in ("main", "ceiling"):
            continue
        cell = by_label[row["model"]][main.columns.index(_label(row["measure"]))]
        if not row["score"]:
            assert cell.text.startswith("errors:")
            continue
        low = float(row["ci_low"])
        high = float(row["ci_high"])
        expected = fmt_interval(float(row["score"]), low, high, int(row["questions"]))
        assert cell.text.removesuffix(" †") == expected
        seen += 1
    assert seen == 5 * len(MEASURES)
    assert {r["role"] for r in rows} == {"main", "ceiling", "variant"}
    assert {r["coverage"] for r in rows if r["role"] == "variant"} == {""}


def test_variants_are_paired_with_zero_shot_on_the_same_questions(
    mixed: tuple[Path, dict[str, Path]],
) -> None:
    suite, written = mixed
    variants = _tables(written)["variants"]
    zero = load_samples(suite / "runs" / "knn" / "samples.jsonl")
    for run, variant, n in (("knn-cot", "cot", 5), ("knn-noisy", "noisy", 25)):
        samples = load_samples(suite / "runs" / run / "samples.jsonl")
        row = next(r for r in variants.rows if r[1].text == variant)
        assert row[variants.columns.index("shared")].text == str(n * len(MEASURES))
        for measure in MEASURES:
            mine = [s for s in samples if s.measure == measure]
            ids = {s.question_id for s in mine}
            base = [s for s in zero if s.question_id in ids]
            v, z = sum(s.hit for s in mine) / n, sum(s.hit for s in base) / n
            cell = row[variants.columns.index(_label(measure))]
            assert leading_score(cell.text) == pytest.approx(v, abs=5e-4)
            assert f"zero-shot {z:.3f} on the same {n} questions" in cell.title
            if z:
                assert f"{100 * (v - z) / z:+.1f}%".replace("-", "−") in cell.text
    noisy = _tables(written)["noisy"]
    assert [r[1].text for r in noisy.rows[:3]] == ["zero-shot", "-noise", "relative drop"]


def test_the_radar_draws_only_the_primary_runs(mixed: tuple[Path, dict[str, Path]]) -> None:
    _, written = mixed
    html = written["html"].read_text(encoding="utf-8")
    start = html.index('<figure id="fig-radar-')  # the radar's SVG, then its caption
    caption = html.index("<figcaption>", start)
    assert "mental world" in html[caption : html.index("</figcaption>", caption)]
    radar = html[start:caption]
    assert "itemknn" in radar and "popularity" in radar
    assert "smollm2" not in radar and "oracle" not in radar


def test_markdown_agrees_with_the_html(mixed: tuple[Path, dict[str, Path]]) -> None:
    _, written = mixed
    md = written["markdown"].read_text(encoding="utf-8")
    for key, title in (
        ("main-ml-100k", "### Results on LRWorld (ml-100k)"),
        ("scales-ml-100k", "### Scales (ml-100k)"),
    ):
        table = _tables(written)[key]
        block = md.split(title + "\n")[1].split("\n\n*")[0]
        body = [line for line in block.splitlines() if line.startswith("| ") and "*scale*" not in line]
        body = [line for line in body[1:] if not line.startswith("| ---")]  # the header and alignment rows
        cells = [
            [c.strip().strip("*").replace("\\|", "|") for c in line.strip("|").split(" | ")] for line in body
        ]
        assert cells == [[c.text for c in row] for row in table.rows]


def test_edges_in_one_report(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    runs = suite / "runs"
    one = ("kg_movie_genre",)
    write_run(runs / "none", model="never", dataset="d", measures=one, policy=never(), n=20)
    write_run(runs / "all", model="always", dataset="d", measures=one, policy=perfect(), n=20)
    write_run(runs / "flaky", model="flaky", dataset="d", measures=one, policy=perfect(), n=20, errors=3)
    write_run(runs / "single", model="single", dataset="d", measures=one, policy=perfect(), n=1)
    write_run(runs / "five", model="five", dataset="d", measures=one, policy=skilled(0.5), n=5, seed=3)
    written = write_report([suite], tmp_path / "out")
    main = _tables(written)["main-d"]
    assert main.cell("never", "KG (movie, genre)").text == "0.000 [0.000, 0.168]"
    assert main.cell("always", "KG (movie, genre)").text == "1.000 [0.832, 1.000]"
    # Three failed requests: scored on 17, still a full run (it asked the same 20 questions).
    assert main.cell("flaky", "KG (movie, genre)").text == "1.000 [0.805, 1.000]"
    assert main.cell("single (partial: 1 measure × 1 question)", "KG (movie, genre)").text == "1.000 (n=1)"
    assert main.cell("five (partial: 1 measure × 5 questions)", "KG (movie, genre)").text.endswith("(n=5)")
    assert not main.cell("single (partial: 1 measure × 1 question)", "KG (movie, genre)").bold
    assert main.cell("always", "KG (movie, genre)").bold and main.cell("flaky", "KG (movie, genre)").bold
    assert "Failed requests" in written["markdown"].read_text(encoding="utf-8")
