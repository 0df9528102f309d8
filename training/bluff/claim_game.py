"""R29's claim, solved (``solved_claims``): the claim game's equilibrium read off a seat's
observation, as the bluff policy's claims and answers. It lives in
`pisti_env.policies.claim_game` (a policy with solved claims, the shipped ``pisti-bluff``,
plays without the trainer); this module re-exports it for code that imports it from here.
``pisti-solve-claims`` (`.solve_claims`) gives a policy solved claims.
"""

from pisti_env.policies.claim_game import SolvedClaims, hypergeometric, solve, thresholds

__all__ = ["SolvedClaims", "hypergeometric", "solve", "thresholds"]
