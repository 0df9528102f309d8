"""Training-side tools: the evaluation harness (``pisti-eval``) and, later, the trainer.

Importing this package is cheap: it imports neither torch nor matplotlib; each module pulls
in what it needs.
"""
