"""``python -m training.trainer``: the same as ``pisti-train``."""

from .cli import main

raise SystemExit(main())
