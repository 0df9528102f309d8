"""PettingZoo-style module for the environment: ``from pisti_env import pisti_v0; pisti_v0.env()``."""
from .env import env, raw_env

__all__ = ["env", "raw_env"]
