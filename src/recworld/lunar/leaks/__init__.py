"""The release gate's scanner: every anchor string of a run, found again wherever it reappears.

A model shown real records copies them: a title into a week summary, a merchant and a
booking reference into a record, a nickname into a lifestyle phrase, a real date into a
scene. :class:`Scanner` holds every string of a run's anchors, each with its *kind*
(``title``, ``merchant``, ``place``, ``reference``, ``id``, ``name``, ``nickname``,
``employer``, ``contact``, ``field``, ``demographic``, ``number``), plus the real dates
(``date``: the days of the real records and every date in their values; ``birthdate``),
and finds them in any text:

* a **distinctive** string is found anywhere, case and separators folded
  (``Canarybistro Kowloon``, ``PNRCANARY99``, ``The Lighthouse Keeper's Daughter``,
  ``Heat (1995)``): one with a rare word (Zipf frequency below :data:`RARE_ZIPF` in
  ``wordfreq``'s English list), a code mixing letters and digits, a number of five or more
  digits, three or more words, or two words one of which is uncommon. Each rare word of a
  string is itself a distinctive string of the same kind, so ``Kowloon`` alone is found too;
* a string of **ordinary words** (the title ``Heat``, ``Friday``, ``Kids``, the place
  ``Central Park``) is found only *as that string in context*: the whole value of a field of
  its kind (``title: Heat``), quoted (``"Heat"``), followed by a year (``Heat (1995)``),
  after a cue of its kind (``watched Heat``, ``dinner at Central Park``, ``with Will``), or
  capitalised beside another value of the same real record. So "avoid the heat on Friday"
  stays as it is;
* a person's name is found anywhere as a whole; its parts when capitalised and not very
  common words (``Dana``, ``Quill``; not ``Will``);
* dates by value, in any format :mod:`recworld.lunar.datetext` reads.

:meth:`Scanner.redact` replaces each hit with a token of its kind (numbered through a
:class:`~recworld.lunar.deid.Deidentifier`, so the same string is the same token across a
release) and counts it; :meth:`Scanner.mask` does the same for text that is printed or
logged (``<TITLE>``), and :func:`masking_logs` applies it to every log record while a
stage runs. The release writer (:mod:`recworld.lunar.synth.release`) decides what a hit
means: a record that copies anchor content is dropped, a name in prose becomes a token.
"""

from recworld.lunar.leaks.kinds import (
    CONTENT_KINDS,
    ID_DIGITS,
    KINDS,
    PERSON_KINDS,
    distinctive,
    extra_kind,
    field_kind,
    fold_key,
    fold_words,
    zipf,
)
from recworld.lunar.leaks.logs import masking_logs, string_leaves
from recworld.lunar.leaks.scanner import Hit, LeakCounts, Scanner
from recworld.lunar.leaks.secrets import Secret

__all__ = [
    "CONTENT_KINDS",
    "ID_DIGITS",
    "KINDS",
    "PERSON_KINDS",
    "Hit",
    "LeakCounts",
    "Scanner",
    "Secret",
    "distinctive",
    "extra_kind",
    "field_kind",
    "fold_key",
    "fold_words",
    "masking_logs",
    "string_leaves",
    "zipf",
]
