# Source: https://github.com/wrk8/DMBP/blob/72ae7ed164bbde122299f2e0695db720a220240b/Utils/Evaluation.py
# Report: audited evaluation code: evaluate_DT_rtg keeps the whole episode history of the Decision Transformer on the device and grows it with torch.cat on every environment step (up to max_ep_len = 1000 steps)
# Shape: near-miss variant: the histories are preallocated once for max_ep_len steps and written by index; the model sees the slice [:t + 1]; torch.cat is used only to build a fresh padding mask each step, not to grow an accumulator
# Expect: near-miss: must be silent
import numpy as np
import torch


@torch.no_grad()
def evaluate_DT_rtg(env, policy, target_return=None, mode='normal', noise_scale=0., Gaussian=True):
    state_dim = policy.state_dim
    act_dim = policy.act_dim
    state_mean = policy.state_mean
    state_std = policy.state_std
    max_ep_len = policy.max_ep_len
    device = policy.device
    scale = policy.scale

    if target_return is not None:
        target_return = target_return / policy.scale

    state = env.reset()
    states = torch.zeros((max_ep_len + 1, state_dim), device=device, dtype=torch.float32)
    actions = torch.zeros((max_ep_len, act_dim), device=device, dtype=torch.float32)
    rewards = torch.zeros(max_ep_len, device=device, dtype=torch.float32)
    returns_to_go = torch.zeros((1, max_ep_len + 1), device=device, dtype=torch.float32)
    timesteps = torch.arange(max_ep_len + 1, device=device, dtype=torch.long).reshape(1, -1)
    states[0] = torch.from_numpy(state).to(device=device, dtype=torch.float32)
    returns_to_go[0, 0] = target_return

    episode_return, episode_length = 0, 0
    for t in range(max_ep_len):
        context = min(t + 1, policy.max_length)
        pad = torch.cat([torch.zeros(policy.max_length - context), torch.ones(context)])
        action = policy.get_action(
            (states[:t + 1] - state_mean) / state_std,
            actions[:t + 1],
            rewards[:t + 1],
            returns_to_go[:, :t + 1],
            timesteps[:, :t + 1],
            attention_mask=pad.to(device),
        )
        actions[t] = action
        action = action.detach().cpu().numpy()

        state, reward, done, _ = env.step(action)
        if mode == 'noise':
            if Gaussian:
                state = state + noise_scale * np.random.randn(state_dim)
            else:
                state = state + (2 * noise_scale * np.random.rand(state_dim) - noise_scale)

        states[t + 1] = torch.from_numpy(state).to(device=device, dtype=torch.float32)
        rewards[t] = reward
        pred_return = returns_to_go[0, t] - (reward / scale) if mode != 'delayed' else returns_to_go[0, t]
        returns_to_go[0, t + 1] = pred_return

        episode_return += reward
        episode_length += 1
        if done:
            break

    return episode_return, episode_length


def eval_DT_noise(policy, eval_env, eval_episodes=10, target_reward=3000, noise_scale=0., Gaussian=True):
    reward_buffer = []
    length_buffer = []
    for _ in range(eval_episodes):
        with torch.no_grad():
            total_return, total_length = evaluate_DT_rtg(eval_env, policy, target_reward,
                                                         'noise', noise_scale, Gaussian)
        reward_buffer.append(total_return)
        length_buffer.append(total_length)

    avg_reward = eval_env.get_normalized_score(np.average(reward_buffer)) * 100
    std_reward = eval_env.get_normalized_score(np.std(reward_buffer)) * 100
    print(f"Eval-Episode over {eval_episodes} episodes: mean {avg_reward:.3f} and std {std_reward:.3f}")
    print(f"With Episode length of mean {np.mean(length_buffer):.3f}")
    return avg_reward, std_reward
