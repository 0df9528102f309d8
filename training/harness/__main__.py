"""``python -m training.harness``: the same as ``pisti-eval``."""

import sys

from .evaluate import main

sys.exit(main())
