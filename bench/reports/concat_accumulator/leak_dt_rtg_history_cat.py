# Source: https://github.com/wrk8/DMBP/blob/72ae7ed164bbde122299f2e0695db720a220240b/Utils/Evaluation.py
# Report: audited evaluation code: evaluate_DT_rtg keeps the whole episode history of the Decision Transformer on the device and grows it with torch.cat on every environment step (up to max_ep_len = 1000 steps)
# Shape: the same rollout loop; states/actions/rewards/target_return/timesteps are each rebuilt by torch.cat([acc, new]) per step, so each step copies the whole history (quadratic); grad is off (the original wraps the call in torch.no_grad(), here also the decorator), so only TML008 applies
# Expect: TML008 line 32; TML008 line 33; TML008 line 53; TML008 line 57; TML008 line 58
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
    states = torch.from_numpy(state).reshape(1, state_dim).to(device=device, dtype=torch.float32)
    actions = torch.zeros((0, act_dim), device=device, dtype=torch.float32)
    rewards = torch.zeros(0, device=device, dtype=torch.float32)
    target_return = torch.tensor(target_return, device=device, dtype=torch.float32).reshape(1, 1)
    timesteps = torch.tensor(0, device=device, dtype=torch.long).reshape(1, 1)

    episode_return, episode_length = 0, 0
    for t in range(max_ep_len):
        # padding for the action/reward that are not known yet
        actions = torch.cat([actions, torch.zeros((1, act_dim), device=device)], dim=0)  # expect: TML008
        rewards = torch.cat([rewards, torch.zeros(1, device=device)])  # expect: TML008

        action = policy.get_action(
            (states - state_mean) / state_std,
            actions,
            rewards,
            target_return,
            timesteps,
        )
        actions[-1] = action
        action = action.detach().cpu().numpy()

        state, reward, done, _ = env.step(action)
        if mode == 'noise':
            if Gaussian:
                state = state + noise_scale * np.random.randn(state_dim)
            else:
                state = state + (2 * noise_scale * np.random.rand(state_dim) - noise_scale)

        cur_state = torch.from_numpy(state).to(device=device, dtype=torch.float32).reshape(1, state_dim)
        states = torch.cat([states, cur_state], dim=0)  # expect: TML008
        rewards[-1] = reward

        pred_return = target_return[0, -1] - (reward / scale) if mode != 'delayed' else target_return[0, -1]
        target_return = torch.cat([target_return, pred_return.reshape(1, 1)], dim=1)  # expect: TML008
        timesteps = torch.cat(  # expect: TML008
            [timesteps, torch.ones((1, 1), device=device, dtype=torch.long) * (t + 1)], dim=1)

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
