# Source: https://github.com/rohansaw/Mario-Kart-RL/blob/0baacae8e6254d14cbfb309866ab9c102a763607/agent.py
# Report: fix of the Mario Kart one-step actor-critic agent: train() runs after every environment step and updates the critic and then the actor; resetting each optimizer's gradients right before its backward makes every update use only the current step's gradients
# Shape: same MarioKartAgent class with select_action(), _compute_advantage(), train() doing both updates (each preceded by its optimizer's zero_grad()) and logging .item() values to wandb, and run() looping over episodes and steps calling self.train(...)
# Expect: near-miss: must be silent
import torch
import wandb
from torchvision import transforms


class MarioKartAgent:
    def __init__(self, env, actor, critic, num_episodes=400, max_steps=10000, device="cuda"):
        self.env, self.device = env, device
        self.actor, self.critic = actor.to(device), critic.to(device)
        self.num_episodes, self.max_steps = num_episodes, max_steps
        self.gamma = 0.99
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=0.01)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=0.01)
        self.transform = transforms.Compose([
            transforms.Resize((120, 160)),
            transforms.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5]),
        ])

    def _transform_state(self, state):
        state = torch.from_numpy(state.copy()).to(self.device).to(torch.float32)
        return self.transform(torch.movedim(state, 2, 0).unsqueeze(0))

    def select_action(self, state):
        probs = self.actor(self._transform_state(state))
        dist = torch.distributions.Categorical(probs)
        action_index = dist.sample()
        return action_index[0], dist.log_prob(action_index)

    def _compute_advantage(self, observed_reward, state, next_state):
        next_state = self._transform_state(next_state)
        state = self._transform_state(state)
        target = observed_reward + self.gamma * self.critic(next_state)
        return target - self.critic(state)

    def train(self, state, next_state, action_prob, observed_reward, step, episode):
        advantage = self._compute_advantage(observed_reward, state, next_state)
        critic_loss = advantage.pow(2)
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        actor_loss = -action_prob * advantage.detach()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()
        wandb.log({"critic": critic_loss.item(), "actor": actor_loss.item(),
                   "step": step, "episode": episode}, step=step)

    def run(self):
        rewards = []
        for episode_num in range(1, self.num_episodes):
            state = self.env.reset()
            episode_reward = 0
            for _ in range(100):
                self.env.step(0)
            for t in range(1, self.max_steps):
                action, action_prob = self.select_action(state)
                next_state, observed_reward, terminated, info = self.env.step(action)
                self.train(state, next_state, action_prob, observed_reward, t, episode_num)
                episode_reward += observed_reward
                state = next_state
                if terminated:
                    rewards.append(episode_reward)
                    break
        self.env.close()
        return rewards
