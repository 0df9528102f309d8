"""The bluff variant's research (R29), an optional extension of the PPO trainer.

Nothing in the core trainer needs this package unless a run or a checkpoint asks for R29's
research options (:class:`~training.trainer.spec.NetworkSpec`: an answer head, a claim head,
their fictitious-play average, solved claims). It plugs in through the trainer's extension
points (:mod:`training.trainer.extension`, documented in ``docs/training-extensions.md``):

* :mod:`.heads`: the answer and claim heads, their views, the averaged heads (network heads);
* :mod:`.claim_game`: the claim game solved (``solved_claims``);
* :mod:`.average`: fictitious play for the two heads (``average_heads_every``);
* :mod:`.extension`: the trainer hooks (warm starts, a frozen answer head, the answers' entropy
  weight, the averaged seats, the average's state);
* :mod:`.solve_claims`: ``pisti-solve-claims``; :mod:`.capture_value`: ``pisti-capture-value``.
"""
