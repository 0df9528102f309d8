"""The environments, on the engines and the players.

* `env`: the PettingZoo AEC environment (`raw_env`, `env`); `pisti_v0`: its PettingZoo-style
  module; `order_enforcing`: its wrapper.
* `single_agent`: `PistiEnv`, the Gymnasium env `pisti/Pisti-v0`; `vector`: `PistiVectorEnv`,
  its vector form on the batched engine.
* `spaces` (the observation and action spaces), `seeding` (the game seed of `reset(seed)`),
  `render` (text rendering): what the three envs share.
"""
