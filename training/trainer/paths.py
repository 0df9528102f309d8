"""Files inside a checkpoint or a run directory, read as untrusted: regular files at their own
names, never followed through a symbolic link. The functions live in
`pisti_env.util.regular_files` (the policy loader reads checkpoints through them); this module
re-exports them for code that imports them from here.
"""

from pisti_env.util.regular_files import Refusal, describe, entry_kind, read_regular, regular_file

__all__ = ["Refusal", "describe", "entry_kind", "read_regular", "regular_file"]
