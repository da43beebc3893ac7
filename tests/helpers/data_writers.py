"""Writers of small fixture folders written byte for byte in each published format.

All formats describe the same tiny world (3 users, 5 movies, 8 ratings) so the
contract tests can compare them, and each writer takes overrides so a test can
break one file on purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

# (user, item, rating, timestamp): deliberately not in time order in the files.
RATINGS: list[tuple[int, int, float, int]] = [
    (2, 1, 4.0, 881250950),
    (1, 2, 3.0, 881250949),
    (1, 1, 5.0, 881250900),
    (3, 4, 2.0, 881251000),
    (2, 3, 1.0, 881250800),
    (1, 4, 4.0, 881250990),
    (3, 1, 5.0, 881250700),
    (10, 5, 3.0, 881250000),
]
N_USERS, N_ITEMS, N_INTERACTIONS = 4, 5, 8

# ML-100K u.item rows: latin-1 title, an "unknown"-flagged item, a title without a year.
ML100K_FLAGS = {
    1: [3, 4, 5],  # Animation, Children's, Comedy
    2: [5, 14],  # Comedy, Romance
    3: [0],  # unknown
    4: [8, 12],  # Drama, Musical
    5: [8],
}
ML100K_ITEMS = [
    (1, "Toy Story (1995)", "01-Jan-1995"),
    (2, "Café au Lait (1993)", "01-Jan-1993"),
    (3, "unknown", ""),
    (4, "Misérables, Les (1995)", "01-Jan-1995"),
    (5, "Title Without Year", "01-Jan-1997"),
]
ML100K_USERS = [
    "1|24|M|technician|85711",
    "2|53|F|other|94043",
    "3|23|M|writer|32067",
    "10|53|M|lawyer|T8H1N",
]
ML100K_GENRE_NAMES = [
    "unknown",
    "Action",
    "Adventure",
    "Animation",
    "Children's",
    "Comedy",
    "Crime",
    "Documentary",
    "Drama",
    "Fantasy",
    "Film-Noir",
    "Horror",
    "Musical",
    "Mystery",
    "Romance",
    "Sci-Fi",
    "Thriller",
    "War",
    "Western",
]

Writer = Callable[..., Path]


def _write(path: Path, text: str, encoding: str = "utf-8") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))


def write_ml100k(root: Path, *, with_genre_file: bool = True) -> Path:
    _write(root / "u.data", "".join(f"{u}\t{i}\t{int(r)}\t{t}\n" for u, i, r, t in RATINGS))
    lines = []
    for item_id, title, date in ML100K_ITEMS:
        flags = ["1" if g in ML100K_FLAGS[item_id] else "0" for g in range(19)]
        url = "" if item_id == 3 else f"http://us.imdb.com/M/title-exact?{item_id}"
        lines.append("|".join([str(item_id), title, date, "", url, *flags]) + "\n")
    _write(root / "u.item", "".join(lines), "latin-1")
    _write(root / "u.user", "".join(line + "\n" for line in ML100K_USERS))
    if with_genre_file:
        genre_text = "".join(f"{g}|{i}\n" for i, g in enumerate(ML100K_GENRE_NAMES)) + "\n"
        _write(root / "u.genre", genre_text)
    return root


def write_recbole(root: Path, name: str = "tiny") -> Path:
    inter = "user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
    inter += "".join(f"{u}\t{i}\t{int(r)}\t{t}\n" for u, i, r, t in RATINGS)
    _write(root / f"{name}.inter", inter)
    item = "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n"
    item += "1\tToy Story\t1995\tAnimation Children's Comedy\n"
    item += "2\tCafé au Lait\t1993\tComedy Romance\n"
    item += "3\tunkonwn\tunkonwn\tunknown\n"
    item += "4\tMisérables, Les\t1995\tDrama Musical\n"
    item += "5\tTitle Without Year\t1997\tDrama\n"
    _write(root / f"{name}.item", item)
    user = "user_id:token\tage:token\tgender:token\toccupation:token\tzip_code:token\n"
    user += "".join(line.replace("|", "\t") + "\n" for line in ML100K_USERS)
    _write(root / f"{name}.user", user)
    _write(
        root / f"{name}.kg", "head_id:token\trelation_id:token\ttail_id:token\nm.1\tfilm.film.actor\tm.2\n"
    )
    _write(root / f"{name}.link", "item_id:token\tentity_id:token\n1\tm.1\n")
    return root


def write_ml1m(root: Path) -> Path:
    _write(root / "ratings.dat", "".join(f"{u}::{i}::{int(r)}::{t}\n" for u, i, r, t in RATINGS), "latin-1")
    movies = [
        "1::Toy Story (1995)::Animation|Children's|Comedy",
        "2::Café au Lait (1993)::Comedy|Romance",
        "3::City of Lost Children, The (1995)::Adventure|Sci-Fi",
        "4::Misérables, Les (1995)::Drama|Musical",
        "5::Title Without Year::Drama",
    ]
    _write(root / "movies.dat", "".join(m + "\n" for m in movies), "latin-1")
    users = ["1::F::1::10::48067", "2::M::56::16::70072", "3::M::25::15::55117", "10::F::35::1::95370"]
    _write(root / "users.dat", "".join(u + "\n" for u in users), "latin-1")
    return root


def write_ml25m(root: Path) -> Path:
    ratings = "userId,movieId,rating,timestamp\n"
    ratings += "".join(f"{u},{i},{r},{t}\n" for u, i, r, t in RATINGS)
    _write(root / "ratings.csv", ratings)
    movies = "movieId,title,genres\n"
    movies += "1,Toy Story (1995),Adventure|Animation|Children|Comedy|Fantasy\n"
    movies += '2,"Café au Lait, Le (1993)",Comedy|Romance\n'
    movies += '3,"American President, The (1995)",Comedy|Drama|Romance\n'
    movies += "4,Misérables (1995),Drama\n"
    movies += "5,Title Without Year,(no genres listed)\n"
    _write(root / "movies.csv", movies)
    links = "movieId,imdbId,tmdbId\n1,0114709,862\n2,0113228,\n3,0112346,9087\n4,0114576,1\n5,0000001,2\n"
    _write(root / "links.csv", links)
    return root


WRITERS: dict[str, Writer] = {
    "ml-100k": write_ml100k,
    "recbole": write_recbole,
    "ml-1m": write_ml1m,
    "ml-25m": write_ml25m,
}
