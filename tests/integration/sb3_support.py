"""Shared by the SB3 integration tests: a referee between SB3 and our batched door. Needs the
``sb3`` extra; only test modules that already skipped without it import this."""

from __future__ import annotations

import numpy as np
from stable_baselines3.common.vec_env import VecEnvWrapper

from pisti_env.game.rewards import side_difference


class VecReferee(VecEnvWrapper):
    """Between a library and a PistiSB3VecEnv (or a wrapper of it): counts the actions that the
    masks shown to the library (``action_masks`` as the step was asked for) did not allow, and
    records each finished episode as ``(return the library saw, the learner side's final score
    difference)``, the difference from the episode's last infos (``match_scores``, ``side``)."""

    def __init__(self, venv):
        super().__init__(venv)
        self.illegal, self.episodes, self.seats = 0, [], set()
        self._returns = np.zeros(self.num_envs)

    def reset(self):
        self._returns[:] = 0.0
        return self.venv.reset()

    def step_async(self, actions):
        masks = np.stack(self.venv.env_method("action_masks"))
        self.illegal += int((~masks[np.arange(self.num_envs), np.asarray(actions).reshape(-1)]).sum())
        self.venv.step_async(actions)

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        self._returns += rewards
        for b in np.flatnonzero(dones):
            info = infos[b]
            self.episodes.append((float(self._returns[b]), side_difference(info["match_scores"], info["side"])))
            self.seats.add(info["seat"])
            self._returns[b] = 0.0
        return obs, rewards, dones, infos

    def action_masks(self):
        return self.venv.env_method("action_masks")
