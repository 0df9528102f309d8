"""The bluff variant's research (R29), an optional extension of the PPO trainer.

Nothing in the core trainer needs this package unless a run or a checkpoint asks for R29's
research options (`NetworkSpec`: an answer head, a claim head,
their fictitious-play average, solved claims). It plugs in through the trainer's extension
points (`training.trainer.extension`, documented in ``docs/training-extensions.md``):

* the network heads (the answer and claim heads, their views, the averaged heads) and the
  claim game solved (``solved_claims``) are part of the policy network, so that such a policy
  plays without the trainer: `pisti_env.policies.claim_heads` and
  `pisti_env.policies.claim_game` (`.heads` and `.claim_game` re-export them);
* `.average`: fictitious play for the two heads (``average_heads_every``);
* `.extension`: the trainer hooks (warm starts, a frozen answer head, the answers' entropy
  weight, the averaged seats, the average's state);
* `.solve_claims`: ``pisti-solve-claims``; `.capture_value`: ``pisti-capture-value``.
"""
