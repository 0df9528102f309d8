"""The KL pull toward a reference policy (``TrainConfig.magnet_coef``, issue 13): the KL itself,
the magnet staying frozen or following the run every ``magnet_every`` updates, the pull keeping
the policy near its reference, and a resumed run restoring the magnet exactly."""

from __future__ import annotations

import dataclasses

import pytest

torch = pytest.importorskip("torch")

from pisti_env.rules.actions import BELIEVE, CHALLENGE  # noqa: E402
from pisti_env.rules.settings import Settings  # noqa: E402
from training.trainer.checkpoint import latest_run_checkpoint  # noqa: E402
from training.trainer.cli import main  # noqa: E402
from training.trainer.config import TrainConfig  # noqa: E402
from pisti_env.policies.loader import load_policy  # noqa: E402
from pisti_env.policies.network import log_probs  # noqa: E402
from training.trainer.network import entropy  # noqa: E402
from training.trainer.ppo import magnet_kl  # noqa: E402
from training.trainer.logs import metric_names  # noqa: E402
from training.trainer.train import Trainer  # noqa: E402


def tiny(**changes) -> TrainConfig:
    config = TrainConfig(
        settings=Settings(bluff=True, target=None), num_envs=16, rollout_steps=8, total_steps=16 * 8 * 6,
        hidden_sizes=(16,), value_hidden_sizes=(16,), precision="fp32", torch_threads=1, eval_every=0,
        checkpoint_every=0, learning_rate=3e-3, anneal_lr=False,
    )
    return dataclasses.replace(config, **changes)


def policy_tensors(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in module.state_dict().items()}


def fresh_decisions(trainer: Trainer) -> tuple[torch.Tensor, torch.Tensor]:
    """The observations and masks of one fresh rollout of ``trainer``, one row per decision."""
    rollout = trainer.collector.collect(trainer.network)
    obs = rollout.observation[:-1].reshape(-1, rollout.observation.shape[-1])
    return obs, rollout.mask.reshape(obs.shape[0], -1)


def test_magnet_kl_is_the_kl_over_legal_actions_only():
    generator = torch.Generator().manual_seed(0)
    logits, reference = torch.randn(2, 64, 106, generator=generator)
    mask = torch.rand(64, 106, generator=generator) < 0.3
    mask[:, 0] = True
    logp, ref_logp = log_probs(logits, mask), log_probs(reference, mask)
    p, q = logp.exp(), ref_logp.exp()
    for row in range(64):  # KL(p || q) by its definition, over the legal actions
        legal = mask[row]
        expected = (p[row, legal] * (p[row, legal] / q[row, legal]).log()).sum()
        assert magnet_kl(logp, ref_logp, mask)[row] == pytest.approx(float(expected), rel=1e-4, abs=1e-6)
    assert torch.all(magnet_kl(logp, ref_logp, mask) >= -1e-6)
    assert torch.allclose(magnet_kl(logp, logp, mask), torch.zeros(64))
    # Illegal actions' logits do not count.
    changed = log_probs(logits + 50.0 * (~mask), mask)
    assert torch.allclose(magnet_kl(changed, ref_logp, mask), magnet_kl(logp, ref_logp, mask))


def test_without_magnet_every_the_magnet_stays_the_starting_policy():
    trainer = Trainer(tiny(magnet_coef=0.5))
    start = policy_tensors(trainer.network.policy)
    metrics = [trainer.train_update() for _ in range(3)]
    assert all(k == "losses/magnet_kl" or k in metric_names(trainer.config) for m in metrics for k in m)
    assert 0.0 < metrics[0]["losses/magnet_kl"] < metrics[-1]["losses/magnet_kl"]  # drifting away from the start
    magnet = trainer.magnet.state_dict()
    assert all(torch.equal(magnet[k], start[k]) for k in start)
    assert not all(torch.equal(trainer.network.policy.state_dict()[k], start[k]) for k in start)
    assert not any(p.requires_grad for p in trainer.magnet.parameters())


def test_magnet_every_copies_the_policy_into_the_magnet():
    trainer = Trainer(tiny(magnet_coef=0.5, magnet_every=2))
    start = policy_tensors(trainer.network.policy)
    trainer.train_update()
    assert all(torch.equal(trainer.magnet.state_dict()[k], start[k]) for k in start)
    trainer.train_update()
    now = trainer.network.policy.state_dict()
    assert all(torch.equal(trainer.magnet.state_dict()[k], now[k]) for k in now)
    assert not all(torch.equal(now[k], start[k]) for k in start)


def test_a_strong_pull_keeps_the_policy_near_the_magnet():
    def drift(coef: float) -> float:
        trainer = Trainer(tiny(magnet_coef=coef, learning_rate=1e-2))
        reference = Trainer(tiny(magnet_coef=coef, learning_rate=1e-2))  # the same start (same seed)
        for _ in range(6):
            trainer.train_update()
        obs, mask = fresh_decisions(trainer)
        with torch.no_grad():
            kl = magnet_kl(log_probs(trainer.network.policy(obs), mask), log_probs(reference.network.policy(obs), mask), mask)
        return float(kl.mean())

    free, pulled = drift(1e-9), drift(20.0)
    assert pulled < 0.5 * free, (pulled, free)


def test_the_magnet_is_off_by_default_and_adds_no_metric():
    trainer = Trainer(tiny())
    assert trainer.magnet is None
    assert "losses/magnet_kl" not in trainer.train_update()
    assert "losses/magnet_kl" not in metric_names(trainer.config)


def test_a_resumed_run_restores_the_magnet_exactly(tmp_path):
    def flags(out, steps):
        return ["--bluff", "--steps", str(steps), "--envs", "8", "--rollout", "4", "--hidden-sizes", "8",
                "--value-hidden-sizes", "8", "--target", "0", "--eval-every", "0", "--checkpoint-every", "1",
                "--precision", "fp32", "--threads", "1", "--magnet-coef", "0.3", "--magnet-every", "3", "--no-anneal-lr",
                "--out", str(out), "--quiet"]

    assert main(flags(tmp_path / "whole", 5 * 32)) == 0
    assert main(flags(tmp_path / "cut", 4 * 32)) == 0  # stops after the magnet took the policy of update 3
    assert main([*flags(tmp_path / "cut", 5 * 32), "--resume"]) == 0
    whole = Trainer.resume(latest_run_checkpoint(tmp_path / "whole")[0])
    cut = Trainer.resume(latest_run_checkpoint(tmp_path / "cut")[0])
    for key, value in whole.magnet.state_dict().items():
        assert torch.equal(value, cut.magnet.state_dict()[key]), key
    for key, value in whole.network.policy.state_dict().items():
        assert torch.equal(value, cut.network.policy.state_dict()[key]), key
    assert load_policy(tmp_path / "cut" / "policy") is not None


def answer_entropy(trainer: Trainer, rollouts: int = 3) -> float:
    """Mean entropy of the policy's answers to claims (R29) over a few fresh rollouts."""
    values = []
    for _ in range(rollouts):
        obs, mask = fresh_decisions(trainer)
        answers = mask[:, BELIEVE]
        with torch.no_grad():
            values.append(entropy(log_probs(trainer.network.policy(obs[answers]), mask[answers]), mask[answers]))
    return float(torch.cat(values).mean())


def test_answer_ent_coef_keeps_the_answer_to_a_claim_mixed():
    """R29: a large entropy weight on believe/challenge alone spreads the answers of a policy
    that had settled on believing (a bias on its answer logits); without it they stay settled."""
    def run(answer_ent_coef):
        trainer = Trainer(tiny(
            num_envs=64, rollout_steps=16, learning_rate=1e-2, ent_coef=0.0, answer_ent_coef=answer_ent_coef,
            self_play_share=1.0,
        ))
        with torch.no_grad():  # believe with probability ~0.998
            trainer.network.policy.card_head.bias[BELIEVE] = 3.0
            trainer.network.policy.card_head.bias[CHALLENGE] = -3.0
        before = answer_entropy(trainer)
        for _ in range(4):
            trainer.train_update()
        return before, answer_entropy(trainer)

    (start, plain), (_, mixed) = run(None), run(20.0)
    assert start < 0.05 and plain < 0.3 and mixed > 0.6, (start, plain, mixed)  # ln 2 = 0.69 is fully mixed
    # Without the bluff variant there are no answers: a weight for them is refused, naming it.
    with pytest.raises(ValueError, match="answer_ent_coef needs the bluff variant"):
        tiny(settings=Settings(target=None), answer_ent_coef=5.0)
