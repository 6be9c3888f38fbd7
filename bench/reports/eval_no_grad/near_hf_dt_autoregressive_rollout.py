# Source: https://github.com/huggingface/blog/blob/067deb087e4ce1ce26a28766da7be202be082985/decision-transformers.md
# Report: the "Introducing Decision Transformers" evaluation snippet rolls out DecisionTransformerModel with no torch.no_grad() and grows its histories with torch.cat each step
# Shape: same get_action helper and rollout, but the rollout runs under torch.inference_mode() (a decorator on evaluate_episode) and the histories are preallocated max_ep_len buffers written by index, read as [:t + 1] slices
# Expect: near-miss: must be silent
import numpy as np
import torch


def get_action(model, states, actions, rewards, returns_to_go, timesteps):
    states = states.reshape(1, -1, model.config.state_dim)
    actions = actions.reshape(1, -1, model.config.act_dim)
    returns_to_go = returns_to_go.reshape(1, -1, 1)
    timesteps = timesteps.reshape(1, -1)
    K = model.config.max_length
    states, actions = states[:, -K:], actions[:, -K:]
    returns_to_go, timesteps = returns_to_go[:, -K:], timesteps[:, -K:]
    padding = K - states.shape[1]
    device = states.device
    attention_mask = torch.cat([torch.zeros(padding, device=device),
                                torch.ones(states.shape[1], device=device)]).long().reshape(1, -1)
    states = torch.cat([torch.zeros((1, padding, model.config.state_dim), device=device), states], dim=1)
    actions = torch.cat([torch.zeros((1, padding, model.config.act_dim), device=device), actions], dim=1)
    returns_to_go = torch.cat([torch.zeros((1, padding, 1), device=device), returns_to_go], dim=1)
    timesteps = torch.cat([torch.zeros((1, padding), dtype=torch.long, device=device), timesteps], dim=1)
    _, action_preds, _ = model(states=states.float(), actions=actions.float(), rewards=rewards,
                               returns_to_go=returns_to_go.float(), timesteps=timesteps,
                               attention_mask=attention_mask, return_dict=False)
    return action_preds[0, -1]


@torch.inference_mode()
def evaluate_episode(model, env, state_mean, state_std, target_return=3.6, scale=1000.0,
                     max_ep_len=1000, device="cuda"):
    model.eval()
    state_dim, act_dim = model.config.state_dim, model.config.act_dim
    state_mean = torch.from_numpy(state_mean).to(device)
    state_std = torch.from_numpy(state_std).to(device)
    state = env.reset()
    states = torch.zeros((max_ep_len + 1, state_dim), device=device)
    actions = torch.zeros((max_ep_len, act_dim), device=device)
    rewards = torch.zeros(max_ep_len, device=device)
    rtg = torch.zeros(max_ep_len + 1, device=device)
    timesteps = torch.arange(max_ep_len + 1, device=device).long()
    states[0] = torch.from_numpy(state).float().to(device)
    rtg[0] = target_return
    episode_return = 0.0
    for t in range(max_ep_len):
        action = get_action(model, (states[:t + 1] - state_mean) / state_std, actions[:t + 1],
                            rewards[:t + 1], rtg[:t + 1], timesteps[:t + 1])
        actions[t] = action
        action = action.cpu().numpy()
        state, reward, done, _ = env.step(action)
        states[t + 1] = torch.from_numpy(state).float().to(device)
        rewards[t] = reward
        episode_return += reward
        rtg[t + 1] = rtg[t] - (reward / scale)
        if done:
            break
    return episode_return, t + 1


def run_eval(model, env, stats, episodes=10):
    returns = [evaluate_episode(model, env, np.array(stats["mean"]), np.array(stats["std"]))[0]
               for _ in range(episodes)]
    return float(np.mean(returns)), float(np.std(returns))
