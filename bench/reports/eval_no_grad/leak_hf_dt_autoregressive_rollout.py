# Source: https://github.com/huggingface/blog/blob/067deb087e4ce1ce26a28766da7be202be082985/decision-transformers.md
# Report: the "Introducing Decision Transformers" evaluation snippet rolls out DecisionTransformerModel for up to 1000 steps with no torch.no_grad(); get_action returns action_preds[0, -1] (graph-attached), which is written back with actions[-1] = action, and the histories grow by torch.cat every step
# Shape: same get_action helper and rollout, moved into an evaluate_episode function on the GPU; the forward runs with grad enabled and its output is stored into the loop-carried actions history, so every step's graph stays reachable
# Expect: TML003 line 47; TML008 line 45; TML008 line 46; TML008 line 52; TML008 line 56; TML008 line 57
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


def evaluate_episode(model, env, state_mean, state_std, target_return=3.6, scale=1000.0,
                     max_ep_len=1000, device="cuda"):
    model.eval()
    state_dim, act_dim = model.config.state_dim, model.config.act_dim
    state_mean = torch.from_numpy(state_mean).to(device)
    state_std = torch.from_numpy(state_std).to(device)
    state = env.reset()
    target_return = torch.tensor(target_return, device=device).float().reshape(1, 1)
    states = torch.from_numpy(state).reshape(1, state_dim).float().to(device)
    actions = torch.zeros((0, act_dim), device=device).float()
    rewards = torch.zeros(0, device=device).float()
    timesteps = torch.tensor(0, device=device).reshape(1, 1).long()
    episode_return = 0.0
    for t in range(max_ep_len):
        actions = torch.cat([actions, torch.zeros((1, act_dim), device=device)], dim=0)  # expect: TML008
        rewards = torch.cat([rewards, torch.zeros(1, device=device)])  # expect: TML008
        action = get_action(model, (states - state_mean) / state_std, actions, rewards, target_return, timesteps)  # expect: TML003
        actions[-1] = action
        action = action.detach().cpu().numpy()
        state, reward, done, _ = env.step(action)
        cur_state = torch.from_numpy(state).to(device).reshape(1, state_dim).float()
        states = torch.cat([states, cur_state], dim=0)  # expect: TML008
        rewards[-1] = reward
        episode_return += reward
        pred_return = target_return[0, -1] - (reward / scale)
        target_return = torch.cat([target_return, pred_return.reshape(1, 1)], dim=1)  # expect: TML008
        timesteps = torch.cat([timesteps, torch.ones((1, 1), device=device).long() * (t + 1)], dim=1)  # expect: TML008
        if done:
            break
    return episode_return, t + 1


def run_eval(model, env, stats, episodes=10):
    returns = [evaluate_episode(model, env, np.array(stats["mean"]), np.array(stats["std"]))[0]
               for _ in range(episodes)]
    return float(np.mean(returns)), float(np.std(returns))
