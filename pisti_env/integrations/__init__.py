"""Adapters for RL libraries that need more than the Gymnasium and PettingZoo APIs.

Each submodule imports its library at import time and is never imported by ``pisti_env``
itself, so the base install needs none of them: ``import pisti_env.integrations.rllib`` needs
the ``rllib`` extra, ``pisti_env.agents.openspiel`` the ``openspiel`` extra, and so on.
Two submodules need only torch, because the library doors share them: ``snapshots`` (frozen
copies of a learner's policy and the batched pool of them, for self-play) and ``doors`` (the
vector env behind each batched door).
"""
