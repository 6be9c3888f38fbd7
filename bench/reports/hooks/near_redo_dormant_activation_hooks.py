# Source: https://github.com/timoklein/redo/blob/2e8d3c0e795f0d6c020d86ee1ed376d48f9d0a61/src/redo.py
# Report: as in src/redo.py: run_redo registers a forward hook on every Conv2d/Linear layer of the Q-network for each dormant-neuron check and removes them all before returning
# Shape: the handles collected in the registration loop are released with `for handle in handles: handle.remove()` in the same run_redo call, so no hook or activation outlives the check
# Expect: near-miss: must be silent

from functools import partial

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import wandb

from src.agent import QNetwork, linear_schedule
from src.buffer import ReplayBuffer, ReplayBufferSamples
from src.config import Config


def _get_activation(name: str, activations: dict[str, torch.Tensor]):
    """Fetches and stores the activations of a network layer."""

    def hook(layer: nn.Linear | nn.Conv2d, input: tuple[torch.Tensor], output: torch.Tensor) -> None:
        # ReLU is applied here because the hook sits on the conv/linear layer
        activations[name] = F.relu(output)

    return hook


@torch.inference_mode()
def _get_redo_masks(activations: dict[str, torch.Tensor], tau: float) -> list[torch.Tensor]:
    """True where neurons are dormant; the last activation (q-values) is never reset."""
    masks = []
    for name, activation in list(activations.items())[:-1]:
        if activation.ndim == 4:
            score = activation.abs().mean(dim=(0, 2, 3))
        else:
            score = activation.abs().mean(dim=0)
        normalized_score = score / (score.mean() + 1e-9)
        layer_mask = torch.zeros_like(normalized_score, dtype=torch.bool)
        if tau > 0.0:
            layer_mask[normalized_score <= tau] = 1
        else:
            layer_mask[torch.isclose(normalized_score, torch.zeros_like(normalized_score))] = 1
        masks.append(layer_mask)
    return masks


@torch.no_grad()
def run_redo(batch: ReplayBufferSamples, model: QNetwork, optimizer: optim.Adam, tau: float) -> dict:
    """Counts the dormant neurons of the model on a batch of observations."""
    with torch.inference_mode():
        activations = {}
        activation_getter = partial(_get_activation, activations=activations)

        # Register hooks for all Conv2d and Linear layers to calculate activations
        handles = []
        for name, module in model.named_modules():
            if isinstance(module, torch.nn.Conv2d) or isinstance(module, torch.nn.Linear):
                handles.append(module.register_forward_hook(activation_getter(name)))

        _ = model(batch.observations)

        zero_masks = _get_redo_masks(activations, 0.0)
        total_neurons = sum([torch.numel(mask) for mask in zero_masks])
        zero_count = sum([torch.sum(mask) for mask in zero_masks])
        masks = _get_redo_masks(activations, tau)
        dormant_count = sum([torch.sum(mask) for mask in masks])

        # Remove the hooks again
        for handle in handles:
            handle.remove()

        return {
            "model": model,
            "optimizer": optimizer,
            "zero_fraction": (zero_count / total_neurons) * 100,
            "dormant_fraction": (dormant_count / total_neurons) * 100,
        }


def train(cfg: Config, envs, q_network: QNetwork, target_network: QNetwork, rb: ReplayBuffer, device) -> None:
    optimizer = optim.Adam(q_network.parameters(), lr=cfg.learning_rate, eps=cfg.adam_eps)
    obs, _ = envs.reset(seed=cfg.seed)
    for global_step in range(cfg.total_timesteps):
        epsilon = linear_schedule(cfg.start_e, cfg.end_e, cfg.exploration_fraction * cfg.total_timesteps, global_step)
        if np.random.random() < epsilon:
            actions = np.array([envs.single_action_space.sample() for _ in range(envs.num_envs)])
        else:
            with torch.no_grad():
                q_values = q_network(torch.Tensor(obs).to(device))
            actions = torch.argmax(q_values, dim=1).cpu().numpy()
        next_obs, rewards, terminated, truncated, infos = envs.step(actions)
        rb.add(obs, next_obs, actions, rewards, terminated, infos)
        obs = next_obs

        if global_step > cfg.learning_starts and global_step % cfg.train_frequency == 0:
            data = rb.sample(cfg.batch_size)
            with torch.no_grad():
                target_max, _ = target_network(data.next_observations).max(dim=1)
                td_target = data.rewards.flatten() + cfg.gamma * target_max * (1 - data.dones.flatten())
            old_val = q_network(data.observations).gather(1, data.actions).squeeze()
            loss = F.mse_loss(td_target, old_val)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            logs = {"losses/td_loss": loss.item(), "losses/q_values": old_val.mean().item()}

            if global_step % cfg.redo_check_interval == 0:
                redo_out = run_redo(rb.sample(cfg.redo_bs), model=q_network, optimizer=optimizer, tau=cfg.redo_tau)
                q_network = redo_out["model"]
                optimizer = redo_out["optimizer"]
                logs |= {"regularization/dormant_fraction": redo_out["dormant_fraction"]}

            if global_step % 100 == 0:
                wandb.log(logs, step=global_step)
