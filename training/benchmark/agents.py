"""The agent under benchmark, from any of the forms a user may have it in.

`load_agent` takes one string and returns ``(kind, player)``; the forms, tried in order:

* ``spec``: anything [`pisti_env.agents.make_player`][pisti_env.agents.make_player] builds: a registered player
  (``greedy``, ``pimc:n=32``), a shipped policy's name (``pisti-2p``), a checkpoint directory,
  or a file exported by ``pisti-export`` (``.pt`` TorchScript, ``.onnx``);
* ``sb3``: a saved sb3-contrib ``MaskablePPO`` (a ``.zip`` from ``model.save``), trained on
  ``pisti_v0``'s Dict observations (``MultiInputPolicy``, as ``examples/sb3_maskable_ppo.py``),
  played by its most likely legal action; needs the ``sb3`` extra;
* ``rllib``: an RLlib checkpoint directory (``algo.save()``) of the action-masked module that
  `pisti_env.integrations.rllib.ppo_config` trains, played through
  `RLModulePlayer`; needs the ``rllib`` extra (its own
  environment);
* ``factory``: ``module:function`` (``mypkg.agents:make``), a function returning a
  [`Player`][pisti_env.Player]; it is called with ``settings=`` (the task's
  [`Settings`][pisti_env.rules.Settings]) when it takes that argument, else with no argument. The module
  is imported as `python -m` and uvicorn import theirs: the current directory first on the
  import path, so `my_agents.py` in the folder the command runs from needs no `PYTHONPATH`.

A player with ``act_batch`` (checkpoints, exports, SB3 models, ``random``, ``greedy``,
``expert``) plays the task's deals on the batched engine; any other on the Python engine.

Forms that run code of the file's or the module's choosing when loaded (`CODE_KINDS`: an SB3
zip and an RLlib checkpoint hold pickles, a factory is a module's code) load only with
`trust_code=True` (`pisti-benchmark --trust-code`); without it they are refused with an
[`UntrustedAgentError`][training.benchmark.agents.UntrustedAgentError] naming the flag.
Registered players, shipped policies, checkpoint directories (safetensors and JSON) and
`pisti-export` files (TorchScript, ONNX) load without it (docs/reliability.md, "Agent files
that can run code"). A factory that raises, even `SystemExit`, is a `ValueError` naming it
([`AgentError`][training.benchmark.agents.AgentError]).
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
from types import ModuleType

from pisti_env import Settings
from pisti_env.agents import Player, checkpoint_location, make_player
from pisti_env.agents.registry import AGENTS

from training.harness.duplicate import failure_text

FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
TRUST_FLAG = "--trust-code"
# The forms whose loading runs code the file or module chooses, and why.
CODE_KINDS = {
    "sb3": "an SB3 .zip holds pickles, which run code when loaded",
    "rllib": "an RLlib checkpoint holds pickles, which run code when loaded",
    "factory": "a module:function factory imports and runs that module's code",
}


class AgentError(ValueError):
    """The agent under benchmark failed: its factory or loader raised, or it returned no player.
    The message names the agent."""


class UntrustedAgentError(AgentError):
    """An agent whose loading would run the file's or the module's own code, asked for without
    `trust_code=True` (`--trust-code`)."""



def agent_kind(spec: str) -> str:
    """Which form ``spec`` is (see the module docstring); ``ValueError`` when none fits."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent must be a non-empty string, got {spec!r}")
    if spec.partition(":")[0].strip().lower() in AGENTS:
        return "spec"
    location = checkpoint_location(spec)
    if location is not None:
        path = location[0]
        if FACTORY.match(spec) and os.path.isfile(os.path.join(path, "__init__.py")):
            return "factory"  # `mypkg:make` run beside the package mypkg/: its folder is no checkpoint
        if os.path.isfile(path) and path.endswith(".zip"):
            return "sb3"
        if os.path.isdir(path) and os.path.isfile(os.path.join(path, "rllib_checkpoint.json")):
            return "rllib"
        return "spec"
    if FACTORY.match(spec):
        return "factory"
    raise ValueError(
        f"agent {spec!r} is neither a player spec ({sorted(AGENTS)}, a shipped policy's name), an existing "
        "checkpoint directory, exported policy (.pt/.onnx), SB3 MaskablePPO .zip or RLlib checkpoint, nor a "
        "module:function factory"
    )


def load_agent(spec: str, settings: Settings, device: str = "cpu", seed: int | None = None, *,
               trust_code: bool = False) -> tuple[str, Player]:
    """``(kind, player)`` for ``spec`` (see the module docstring), for the game ``settings``.

    Args:
        spec: the agent, in any form of the module docstring.
        settings: the game it will play.
        device: where a network runs.
        seed: seeds a registered player.
        trust_code: allow the forms of `CODE_KINDS` (SB3 zips, RLlib checkpoints, factories),
            whose loading runs the file's or the module's own code.

    Raises ``ValueError`` for a spec of no known form, a policy made for another game, and
    [`AgentError`][training.benchmark.agents.AgentError] (a ``ValueError``) naming the agent
    for a form of `CODE_KINDS` without ``trust_code``, a factory or loader that raises
    (whatever it raises but ``KeyboardInterrupt``) or that returns no player; ``ImportError``
    when the form's library is missing (naming the extra to install).
    """
    kind = agent_kind(spec)
    if kind == "spec":
        return kind, make_player(spec, seed=seed, settings=settings, device=device)
    if kind in CODE_KINDS and not trust_code:
        raise UntrustedAgentError(f"agent {spec!r} loads only with {TRUST_FLAG}: {CODE_KINDS[kind]}; pass "
                                  f"{TRUST_FLAG} if you trust it")
    try:
        if kind == "sb3":
            return kind, _sb3_player(checkpoint_location(spec)[0], device)  # type: ignore[index]
        if kind == "rllib":
            return kind, _rllib_player(checkpoint_location(spec)[0])  # type: ignore[index]
        return kind, _factory_player(spec, settings)
    except (AgentError, ImportError, KeyboardInterrupt):
        raise
    except BaseException as error:  # SystemExit, EOFError (input() at the end of stdin), anything it raises
        raise AgentError(f"agent {spec!r} failed to load: {failure_text(error)}") from error


def _import_here(module_name: str) -> ModuleType:
    """Import ``module_name`` as `python -m` and uvicorn find an app: the current directory first
    on the import path (put there once, and kept, so the module's own later imports of its
    neighbours work too), then the rest of `sys.path`.

    Raises [`AgentError`][training.benchmark.agents.AgentError] naming the directory when no
    such module is found; an import failing inside the module is raised as it is (its traceback
    points at the line)."""
    here = os.getcwd()
    if not any(os.path.abspath(entry or os.curdir) == here for entry in sys.path):  # "" is the current directory
        sys.path.insert(0, here)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name is None or not (module_name == err.name or module_name.startswith(err.name + ".")):
            raise  # the module was found; something it imports was not
        raise AgentError(f"cannot import module {module_name!r}: no {module_name.replace('.', '/')}.py (or package) "
                         f"in the current directory {here!r} nor on the import path") from None


def _factory_player(spec: str, settings: Settings) -> Player:
    module_name, _, function_name = spec.partition(":")
    try:
        module = _import_here(module_name)
    except AgentError as err:
        raise AgentError(f"agent factory {spec!r}: {err}") from None
    except ImportError as err:  # the module imports something missing: its own failure, not a missing extra
        raise AgentError(f"agent {spec!r} failed to load: {failure_text(err)}") from err
    factory = getattr(module, function_name, None)
    if not callable(factory):
        raise AgentError(f"agent factory {spec!r}: module {module_name!r} has no function {function_name!r}")
    try:
        takes_settings = "settings" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        takes_settings = False
    player = factory(settings=settings) if takes_settings else factory()
    if not isinstance(player, Player):
        raise AgentError(f"agent factory {spec!r} returned {type(player).__name__}, not a Player "
                         "(name, act(view), reset(seed))")
    return player


def _sb3_player(path: str, device: str) -> Player:
    try:
        from sb3_contrib import MaskablePPO
    except ImportError:
        raise ImportError("an SB3 MaskablePPO .zip needs the sb3 extra: pip install 'pisti[sb3]'") from None
    from pisti_env.integrations.sb3 import PolicySnapshot

    model = MaskablePPO.load(path, device=device)
    return PolicySnapshot(model.policy, deterministic=True, name=os.path.basename(path))


def _rllib_player(path: str) -> Player:
    try:
        from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE
    except ImportError:
        raise ImportError("an RLlib checkpoint needs the rllib extra: pip install 'pisti[rllib]'") from None

    # The layout checked before RLlib's model modules are imported (they log warnings on import).
    modules = os.path.join(path, COMPONENT_LEARNER_GROUP, COMPONENT_LEARNER, COMPONENT_RL_MODULE)
    names = sorted(os.listdir(modules)) if os.path.isdir(modules) else []
    names = [n for n in names if os.path.isdir(os.path.join(modules, n))]
    if len(names) != 1:
        raise AgentError(f"RLlib checkpoint {path!r}: expected one module under {modules!r}, found {names}")
    from ray.rllib.core.rl_module.rl_module import RLModule

    from pisti_env.integrations.rllib import RLModulePlayer

    module = RLModule.from_checkpoint(os.path.join(modules, names[0]))
    return RLModulePlayer(module, name=os.path.basename(os.path.normpath(path)))
