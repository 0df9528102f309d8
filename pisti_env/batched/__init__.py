"""A batched Pişti engine in PyTorch: B games held as tensors, stepped together on CPU or CUDA.

Pgx-style: the state is a [`BatchState`][pisti_env.batched.state.BatchState] of plain tensors and
`transitions.step` is a pure function ``(tables, state, actions) -> (state, outcome)``;
there is no Python loop over games. [`BatchedPisti`][pisti_env.batched.BatchedPisti] wraps it for convenience
(``reset`` / ``step`` / ``step_state``), checks every input, and restarts finished games
automatically, so a trainer's batch stays full.

The rules are those of `pisti_env.game` (RULES.md R1–R29 for one deck), and so is the
state: ``code[b, card] = where * CODE_WIDTH + played_by`` packs the Python engine's location
code of each card (``Game.where``, `pisti_env.rules.locations`) and its playing-seat code
(``Game.played_by``) into one integer, one row per game. Card moves that touch many cards at
once (a capture, the sweep) relabel a row through a small table; everything else is per-game
counters (rows of [`pisti_env.rules.counters.Counter`][pisti_env.rules.counters.Counter]). The observation is built by applying
the Python encoder's own lookup tables to those codes, so the two engines share one
definition of the encoding; ``tests/batched/test_batched.py`` checks them equal, bit for bit, on
thousands of random games.

Decks come from a counter-based hash of ``(seed, game slot, episode, hand, attempt)``: game
``i``'s trajectory depends neither on the other games nor on B, and is the same on every
device. Torch's random generators are never used.

Supported: 2, 3, 4 players, partnerships, single hands (``target=None``) and matches
(``target``, ``win_margin``), ``double_pisti``, ``last_card_pisti``,
``ten_diamonds_pisti_bonus``, ``show_stock_bottom``, and the bluff variant (R29: ``bluff``,
``bluff_jack_double``; the action ids of `pisti_env.rules.actions`). Not supported (clear
``ValueError``): two decks (5–6 players). The bluff variant adds a pending claim to the state
(``claimant``, ``claim_card``) and the bluff counter rows; its logic sits behind Python-level
``if settings.bluff`` tests, so a game without it runs none of its operations.

Speed on a CPU comes from few torch operations per step (a step's cost at small batches is
their count, at large ones their memory traffic): the outcome of a face-up play is one row of
a table built from `pisti_env.rules.scoring`, the observation's tail one precomputed row per
(observer, last capturer, dealer, seat to move), and no tensor is copied to the host but at
the few documented branches (``tests/batched/test_batched_device.py``). ``benchmarks/bench_batched.py``
measures it.

Modules, one job each:

- `.state`: [`BatchState`][pisti_env.batched.state.BatchState], [`BatchStep`][pisti_env.batched.state.BatchStep], the row helpers (select, take, put)
  and the ownership rule of in-place updates;
- `.tables`: `Tables`, every static input of the transitions, built once;
- `.moves`: one move (face-up play R9–R17; face-down play and answer, R29);
- `.hands`: new hands (R5–R8, R28), deals (R18) and the end of a hand (R19–R26);
- `.transitions`: the pure step and the rewards;
- `.decks`: the counter-based deck hash (R7 void redraw, R28 cut);
- `.observe`: observations into caller-owned storage, and action masks;
- `.compact`: the ``"uint8"`` observation format (the float vector packed: the card
  block as bytes) and `expand`, which turns it back into floats, bit for bit;
- `.critic`: the critic's hidden-information input (R31);
- `.draws`: a policy's action from its masked log-probabilities (R29's mixed decisions);
- `.engine`: [`BatchedPisti`][pisti_env.batched.BatchedPisti], the façade with the input checks.
"""

from .engine import BatchedPisti
from .state import CODE_WIDTH, BatchState, BatchStep
from .tables import Tables

__all__ = ["BatchedPisti", "BatchState", "BatchStep", "CODE_WIDTH", "Tables"]
