# Source: https://github.com/tinkoff-ai/CORL/blob/2c308c8881546ff2dda78d93346726887b1d8aac/algorithms/offline/dt.py
# Report: audited repository code: the offline Decision Transformer evaluates online by rolling the model out for up to episode_len steps, feeding its own predicted actions back through preallocated device buffers; CORL guards eval_rollout with @torch.no_grad()
# Shape: same eval_rollout/train shape with CORL's @torch.no_grad() on eval_rollout; the predicted action tensor is still written into the preallocated device buffer, but no graph is built, so the buffers hold plain values
# Expect: near-miss: must be silent
from typing import Tuple

import numpy as np
import torch
import torch.nn.functional as F
import wandb
from tqdm.auto import trange

from corl_dt import DecisionTransformer, SequenceDataset, wrap_env


@torch.no_grad()
def eval_rollout(model: DecisionTransformer, env, target_return: float, device: str = "cpu") -> Tuple[float, float]:
    states = torch.zeros(1, model.episode_len + 1, model.state_dim, dtype=torch.float, device=device)
    actions = torch.zeros(1, model.episode_len, model.action_dim, dtype=torch.float, device=device)
    returns = torch.zeros(1, model.episode_len + 1, dtype=torch.float, device=device)
    time_steps = torch.arange(model.episode_len, dtype=torch.long, device=device).view(1, -1)

    states[:, 0] = torch.as_tensor(env.reset(), device=device)
    returns[:, 0] = torch.as_tensor(target_return, device=device)

    episode_return, episode_len = 0.0, 0.0
    for step in range(model.episode_len):
        # last seq_len steps of history; the action at `step` is a dummy the model predicts
        predicted_actions = model(
            states[:, : step + 1][:, -model.seq_len:],
            actions[:, : step + 1][:, -model.seq_len:],
            returns[:, : step + 1][:, -model.seq_len:],
            time_steps[:, : step + 1][:, -model.seq_len:],
        )
        predicted_action = predicted_actions[0, -1]
        next_state, reward, done, info = env.step(predicted_action.cpu().numpy())
        actions[:, step] = predicted_action
        states[:, step + 1] = torch.as_tensor(next_state, device=device)
        returns[:, step + 1] = returns[:, step] - reward
        episode_return += reward
        episode_len += 1
        if done:
            break
    return episode_return, episode_len


def train(config):
    dataset = SequenceDataset(config.env_name, seq_len=config.seq_len, reward_scale=config.reward_scale)
    trainloader = torch.utils.data.DataLoader(dataset, batch_size=config.batch_size, pin_memory=True)
    eval_env = wrap_env(config.env_name, dataset.state_mean, dataset.state_std, config.reward_scale)
    model = DecisionTransformer(state_dim=config.state_dim, action_dim=config.action_dim,
                                seq_len=config.seq_len, episode_len=config.episode_len).to(config.device)
    optim = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)

    trainloader_iter = iter(trainloader)
    for step in trange(config.update_steps, desc="Training"):
        states, actions, returns, time_steps, mask = [b.to(config.device) for b in next(trainloader_iter)]
        predicted_actions = model(states, actions, returns, time_steps, padding_mask=~mask.to(torch.bool))
        loss = F.mse_loss(predicted_actions, actions.detach(), reduction="none")
        loss = (loss * mask.unsqueeze(-1)).mean()
        optim.zero_grad()
        loss.backward()
        optim.step()
        wandb.log({"train_loss": loss.item()}, step=step)

        if step % config.eval_every == 0:
            model.eval()
            for target_return in config.target_returns:
                eval_returns = []
                for _ in range(config.eval_episodes):
                    eval_return, _ = eval_rollout(model, eval_env, target_return * config.reward_scale,
                                                  device=config.device)
                    eval_returns.append(eval_return / config.reward_scale)
                wandb.log({f"eval/{target_return}_return_mean": np.mean(eval_returns)}, step=step)
            model.train()
