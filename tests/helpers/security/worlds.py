"""Small datasets in the ml-latest-small layout, with hostile titles or folder names where a case needs them.

The review's ``gen/mkml.py`` rebuilt: 60 users, 80 movies and 1,500 ratings
drawn from one seed, genres from a fixed list, and with ``evil_titles`` the
first titles replaced by the attack strings of the review's X cases.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

GENRES = ("Action", "Comedy", "Drama", "Horror", "Romance", "Thriller", "Animation", "Sci-Fi")
EVIL_TITLES = (
    "<img src=x onerror=alert(1)>",
    "</script><script>alert(2)</script>",
    '=HYPERLINK("http://evil.example","x")',
    "+1+cmd|' /C calc'!A0",
    "\u202etxt.exe",
    "$\\frac{a}{b}$",
    "[bold red]rich[/bold red] [link=https://evil.example]L[/link]",
    "\x1b]0;PWNED-TITLE\x07\x1b[2Jansi",
    '"><svg onload=alert(3)>',
    "line\nbreak",
    '"""\nimport os; os.system("touch PWNED_TITLE")\n"""',
    "{{7*7}} {0} ${x} %s",
    "@SUM(A1)",
    "-2+3+cmd",
)


def write_ml_latest_small(
    root: Path,
    *,
    users: int = 60,
    movies: int = 80,
    ratings: int = 1500,
    evil_titles: bool = False,
    seed: int = 0,
) -> Path:
    """Write ``movies.csv``, ``ratings.csv`` and ``links.csv`` into ``root``; returns ``root``."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    with (root / "movies.csv").open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["movieId", "title", "genres"])
        for movie in range(1, movies + 1):
            title = EVIL_TITLES[movie - 1] if evil_titles and movie <= len(EVIL_TITLES) else f"Movie {movie}"
            genres = "|".join(sorted(rng.sample(GENRES, rng.randint(1, 3))))
            writer.writerow([movie, f"{title} ({1980 + movie % 40})", genres])
    pairs: set[tuple[int, int]] = set()
    while len(pairs) < ratings:
        # Popular movies and active users, so association and memory measures have signal.
        user = min(users, int(rng.paretovariate(1.2))) if rng.random() < 0.3 else rng.randint(1, users)
        movie = min(movies, int(rng.paretovariate(1.1))) if rng.random() < 0.5 else rng.randint(1, movies)
        pairs.add((user, movie))
    with (root / "ratings.csv").open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["userId", "movieId", "rating", "timestamp"])
        for stamp, (user, movie) in enumerate(sorted(pairs)):
            writer.writerow(
                [user, movie, rng.choice((1.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)), 1_000_000 + stamp * 60]
            )
    with (root / "links.csv").open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["movieId", "imdbId", "tmdbId"])
        for movie in range(1, movies + 1):
            writer.writerow([movie, f"{100000 + movie}", movie])
    return root
