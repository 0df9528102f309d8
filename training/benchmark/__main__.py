"""``python -m training.benchmark``: the same as ``pisti-benchmark``."""

import sys

from .cli import main

sys.exit(main())
