"""Output that no crash, kill or second writer can damage, and the JSON reading every layer shares.

* :mod:`~recworld.io.jsonl`: depth-guarded JSON, JSON-lines records, canonical text;
* :mod:`~recworld.io.files`: atomic file writes, the fsynced and locked journal,
  writes confined to their output folder, named kill points;
* :mod:`~recworld.io.proof`: the one test of whether a path is recworld's own
  to move or delete (sealed names, a per-user key);
* :mod:`~recworld.io.keyfile`: secret key files, made whole once and read back
  only as a key of the right length (the ownership key, a LUNAR run's key);
* :mod:`~recworld.io.stamp`: a large file joined once from parts, verified by
  its SHA-256 and stamped (the packaged GGUF models);
* :mod:`~recworld.io.marker`: the output marker and the in-progress claim;
* :mod:`~recworld.io.swap`: folder swaps journaled and recovered on the next run;
* :mod:`~recworld.io.carry`: what a replaced output's writer did not write, kept;
* :mod:`~recworld.io.owned`: the one ownership rule every command that writes a
  folder follows (claim, mark, swap, lock).
"""

from recworld.io.files import (
    KILL_POINTS,
    Journal,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_jsonl,
    atomic_write_text,
    atomic_writer,
    confine,
    confined,
    fault_hook,
    normal,
    open_append,
    write_error,
    writing,
)
from recworld.io.jsonl import (
    MAX_JSON_DEPTH,
    dumps_canonical,
    iter_json_lines,
    parse_json,
    read_json_object,
    read_models,
)
from recworld.io.marker import CLAIM_FILE, OUTPUT_MARKER, OutputMarker, output_kind, output_kinds
from recworld.io.owned import (
    check_output_dir,
    claim_output_dir,
    mark_output_dir,
    output_directory,
    output_lock,
    require_output,
)
from recworld.io.swap import atomic_directory, recover

__all__ = [
    "CLAIM_FILE",
    "KILL_POINTS",
    "MAX_JSON_DEPTH",
    "OUTPUT_MARKER",
    "Journal",
    "OutputMarker",
    "atomic_directory",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_jsonl",
    "atomic_write_text",
    "atomic_writer",
    "check_output_dir",
    "claim_output_dir",
    "confine",
    "confined",
    "dumps_canonical",
    "fault_hook",
    "iter_json_lines",
    "mark_output_dir",
    "normal",
    "open_append",
    "output_directory",
    "output_kind",
    "output_kinds",
    "output_lock",
    "parse_json",
    "read_json_object",
    "read_models",
    "recover",
    "require_output",
    "write_error",
    "writing",
]
