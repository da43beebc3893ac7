"""LUNAR's privacy by construction: nothing identifying reaches a prompt, every release is attacked.

* :mod:`~recworld.lunar.privacy.columns`: the allowlist schema (identifier, quasi-identifier,
  behaviour, free text); unknown columns are dropped and reported;
* :mod:`~recworld.lunar.privacy.safe`: :class:`SafeUser`, the only user a synthesis prompt
  is built from, made only by :func:`sanitise`;
* :mod:`~recworld.lunar.privacy.surrogates`: Faker names and companies, category surrogates
  for merchants, places and titles, consistent per user under the run key;
* :mod:`~recworld.lunar.privacy.freetext`: free text through Presidio;
* :mod:`~recworld.lunar.privacy.secret`: the run key and the secret time offset;
* :mod:`~recworld.lunar.privacy.scan`: the independent release scanner (it imports nothing
  of the synthesis path's matching code);
* :mod:`~recworld.lunar.privacy.attack`: Anonymeter's singling-out, linkability and
  inference attacks on the release, and the threshold that refuses it.
"""

from recworld.lunar.privacy.safe import ColumnReport, SafeUser, sanitise
from recworld.lunar.privacy.secret import run_key

__all__ = ["ColumnReport", "SafeUser", "run_key", "sanitise"]
