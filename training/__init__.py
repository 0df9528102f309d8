"""Training-side tools: the self-play PPO trainer (``pisti-train``) and the evaluation harness
(``pisti-eval``).

Importing this package is cheap: it imports neither torch nor matplotlib; each module pulls
in what it needs. ``training.load_policy(path)`` loads a trained checkpoint (torch on demand).
"""

from typing import Any


def load_policy(*args: Any, **kwargs: Any):
    """``training.policy.load_policy``: a trained checkpoint as a policy for any seat."""
    from .policy import load_policy as _load_policy

    return _load_policy(*args, **kwargs)
