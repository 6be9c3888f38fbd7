# Source: https://github.com/minhduc080204/tienlen-ai-train/blob/fc828ea65ef986c08d1f668ab3bbf53a51522668/rl/trainer.py
# Report: audit of the card-game PPO trainer: agent.act runs the actor-critic with grad enabled and returns the log-prob and value tensors; the episode loop appends them to the rollout buffer, so every step's forward graph stays alive until the update detaches them
# Shape: PPOAgent.act returns (int action, attached log_prob, attached value); the trainer appends them to RolloutBuffer lists across all steps of an episode, the update stacks them and only then detaches
# Expect: TML001 line 63; TML001 line 65
import numpy as np
import torch
import torch.nn.functional as F

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class RolloutBuffer:
    def __init__(self):
        self.clear()

    def clear(self):
        self.states, self.actions, self.logprobs = [], [], []
        self.rewards, self.values, self.dones = [], [], []


class PPOAgent:
    def __init__(self, model, lr=3e-4, clip_eps=0.2, epochs=4):
        self.model = model.to(device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.clip_eps, self.epochs = clip_eps, epochs

    def act(self, state, action_mask):
        state = torch.as_tensor(state, dtype=torch.float32, device=device).unsqueeze(0)
        logits, value = self.model(state)
        mask = torch.as_tensor(action_mask, dtype=torch.bool, device=device)
        dist = torch.distributions.Categorical(logits=logits.squeeze(0).masked_fill(~mask, -1e9))
        action = dist.sample()
        return action.item(), dist.log_prob(action), value.squeeze()

    def update(self, buffer, returns, advantages):
        states = torch.as_tensor(np.array(buffer.states), dtype=torch.float32, device=device)
        actions = torch.as_tensor(buffer.actions, device=device)
        old_logprobs = torch.stack(buffer.logprobs).detach()
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        for _ in range(self.epochs):
            logits, values = self.model(states)
            dist = torch.distributions.Categorical(logits=logits)
            ratio = (dist.log_prob(actions) - old_logprobs).exp()
            clipped = ratio.clamp(1 - self.clip_eps, 1 + self.clip_eps)
            policy_loss = -torch.min(ratio * advantages, clipped * advantages).mean()
            loss = policy_loss + 0.5 * F.mse_loss(values.squeeze(-1), returns) - 0.01 * dist.entropy().mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


def train(env, agent, encoder, compute_returns, episodes=1000):
    buffer = RolloutBuffer()
    for ep in range(episodes):
        env.reset()
        done = False
        while not done:
            state = encoder.encode(env, env.current_player)
            action, logprob, value = agent.act(state, env.get_action_mask())
            _, done, winner = env.step(action)
            buffer.states.append(state)
            buffer.actions.append(action)
            buffer.logprobs.append(logprob)  # expect: TML001
            buffer.rewards.append(env.reward_for(env.current_player, done, winner))
            buffer.values.append(value)  # expect: TML001
            buffer.dones.append(done)
        returns, advantages = compute_returns(buffer)
        agent.update(buffer, returns.detach().to(device), advantages.detach().to(device))
        buffer.clear()
