"""Settings once: ``TrainConfig`` holds one ``Settings``; the command lines are generated from
the dataclasses (every field a flag, its docstring the help); older flat configs still load."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pisti_env.rules.settings import Settings
from pisti_env.tools.flags import field_docs
from training.trainer.cli import build_parser, config_from_args
from training.trainer.config import TrainConfig

ROOT = Path(__file__).resolve().parents[2]


def test_every_config_field_and_setting_is_a_documented_flag():
    parser = build_parser()
    dests = {a.dest: a for a in parser._actions}
    for cls in (TrainConfig, Settings):
        docs = field_docs(cls)
        for f in dataclasses.fields(cls):
            if f.name == "settings":
                continue
            assert f.name in dests, f.name
            assert f.name in docs and docs[f.name][1], f"{cls.__name__}.{f.name} has no docstring entry"
            assert docs[f.name][1].replace("%", "%%")[:20] in dests[f.name].help
    assert "--pool-uniform-share" in parser.format_help()


def test_the_readme_flags_build_the_config():
    args = build_parser().parse_args([
        "--players", "4", "--no-partnerships", "--steps", "1.2e7", "--envs", "64", "--rollout", "16", "--seed", "3",
        "--device", "cpu", "--threads", "1", "--out", "runs/x", "--bluff", "--target", "0", "--eval-every", "5",
        "--eval-deals", "10", "--pool-uniform-share", "0.2", "--double-pisti", "10", "--no-last-card-pisti",
        "--ten-diamonds-bonus", "3", "--show-stock-bottom", "--bluff-jack-double", "--hidden-sizes", "64", "32",
        "--target-kl", "none", "--ent-coef", "0.02",
    ])
    config = config_from_args(args)
    assert config.settings == Settings(
        num_players=4, partnerships=False, target=None, bluff=True, double_pisti=10, last_card_pisti=False,
        ten_diamonds_pisti_bonus=3, show_stock_bottom=True, bluff_jack_double=True,
    )
    assert (config.total_steps, config.num_envs, config.rollout_steps, config.seed, config.torch_threads) == (
        12_000_000, 64, 16, 3, 1)
    assert (config.out_dir, config.eval_every, config.eval_deals, config.pool_uniform_share) == ("runs/x", 5, 10, 0.2)
    assert config.hidden_sizes == (64, 32) and config.target_kl is None and config.ent_coef == 0.02
    assert config_from_args(build_parser().parse_args([])) == TrainConfig()


def test_the_configs_the_shipped_checkpoints_record_load():
    for path in sorted((ROOT / "checkpoints").glob("*/metadata.json")):
        metadata = json.loads(path.read_text())
        config = TrainConfig.from_dict(metadata["config"])
        assert config.settings.to_dict() == metadata["settings"], path
        assert TrainConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    with pytest.raises(ValueError, match="unknown config field"):
        TrainConfig.from_dict({"num_player": 2})
    with pytest.raises(TypeError, match="Settings"):
        TrainConfig(settings={"num_players": 2})


def test_pisti_eval_takes_every_setting_but_the_match_target_as_a_flag():
    from training.harness.evaluate import build_parser as eval_parser

    dests = {a.dest for a in eval_parser()._actions}
    assert {f.name for f in dataclasses.fields(Settings)} <= dests
    args = eval_parser().parse_args(["greedy", "random", "--win-margin", "10", "--players", "3"])
    assert args.win_margin == 10 and args.num_players == 3 and args.target == 151


def test_the_shipped_bluff_policys_lineage_commands_parse_with_todays_flags(tmp_path, monkeypatch):
    """checkpoints/pisti-bluff/lineage.json's commands reproduce its stages: each pisti-train and
    pisti-solve-claims command parses (a renamed flag would fail here), and each pisti-train
    stage's config passes TrainConfig's checks."""
    import shlex

    from training.bluff.solve_claims import build_parser as solve_parser

    lineage = json.loads((ROOT / "checkpoints" / "pisti-bluff" / "lineage.json").read_text())
    monkeypatch.chdir(tmp_path)  # the checkpoint paths they name, as stand-ins
    for stage in lineage["stages"]:
        argv = shlex.split(stage["command"])
        for flag, value in zip(argv, argv[1:]):
            if flag == "--init-from" or value.endswith("/policy") and not flag.startswith("--"):
                (tmp_path / value).mkdir(parents=True, exist_ok=True)
                (tmp_path / value / "metadata.json").write_text("{}")
    seen = set()
    for stage in lineage["stages"]:
        program, *argv = shlex.split(stage["command"])
        seen.add(program)
        if program == "pisti-train":
            config = config_from_args(build_parser().parse_args(argv))
            assert config.settings.bluff and config.out_dir == stage["out"]
        else:
            assert program == "pisti-solve-claims"
            args = solve_parser().parse_args(argv)
            assert args.capture_value > 0
    assert seen == {"pisti-train", "pisti-solve-claims"}
