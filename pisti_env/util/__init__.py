"""The package's lowest layer: helpers that know nothing of the game.

* `arguments`: the one rule for integer-like and sequence arguments (`check_int`, `check_sequence`).
* `atomic`: the one atomic file writer (`write_atomic`).
* `regular_files`: files read as untrusted input (`read_regular`, `regular_file`, `sha256`).

Nothing here imports another part of `pisti_env`.
"""
