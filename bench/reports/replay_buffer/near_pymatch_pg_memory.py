# Source: https://github.com/raharth/PyMatch/blob/4e67a31464a17e9217549477555e6f602aa8ffbd/pymatch/ReinforcementLearning/policy_gradient.py
# Report: PolicyGradient.play_episode memorizes each step's graph-attached log_prob in a Memory replay buffer and fit_epoch backprops it with retain_graph=True; raharth/PyMatch#23 reports OOM, "might be due to storing variables containing a gradient"
# Shape: fixed variant in the style of the same file's QLearner: actions are chosen under torch.no_grad(), the buffer keeps detached states, actions and rewards, and fit_epoch recomputes log_prob from the stored states with a plain backward
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.distributions import Categorical
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


class Memory(Dataset):
    def __init__(self, memory_cell_names, buffer_size=None, gamma=0.95):
        self.memory_cell_names = memory_cell_names
        self.buffer_size = buffer_size
        self.gamma = gamma
        self.memory_reset()

    def memory_reset(self):
        self.memory = {key: [] for key in self.memory_cell_names}

    def memorize(self, values, cell_name):
        if isinstance(values, Memory):
            for key in cell_name:
                self.memory[key] += values.memory[key]
        else:
            for val, cell in zip(values, cell_name):
                self.memory[cell] += [val]
        if self.buffer_size is not None:
            for key in self.memory:
                self.memory[key] = self.memory[key][-self.buffer_size:]

    def cumul_reward(self, cell_name='reward'):
        R, discounted = 0.0, []
        for r in reversed(self.memory[cell_name]):
            R = R * self.gamma + r.item()
            discounted.insert(0, torch.tensor(R))
        self.memory[cell_name] = discounted

    def __len__(self):
        return len(self.memory[self.memory_cell_names[0]])

    def __getitem__(self, idx):
        return tuple(self.memory[key][idx] for key in self.memory)


class PolicyGradient:
    def __init__(self, env, model, optimizer, crit, memory_size=1000, batch_size=64, device='cuda'):
        self.env = env
        self.model = model.to(device)
        self.optimizer = optimizer
        self.crit = crit  # REINFORCELoss: -(log_prob * reward).mean()
        self.device = device
        self.batch_size = batch_size
        self.train_loader = Memory(['state', 'action', 'reward'], buffer_size=memory_size)
        self.train_dict = {'rewards': [], 'train_losses': []}

    @torch.no_grad()
    def chose_action(self, observation):
        probs = self.model(observation.to(self.device))
        return Categorical(probs.squeeze()).sample().item()

    def play_episode(self):
        observation = self.env.reset().detach()
        episode_reward = 0
        terminate = False
        episode_memory = Memory(['state', 'action', 'reward'], gamma=0.95)
        while not terminate:
            action = self.chose_action(observation)
            new_observation, reward, done, _ = self.env.step(action)
            episode_reward += reward
            episode_memory.memorize((observation, torch.tensor(action), torch.tensor(reward).float()),
                                    ['state', 'action', 'reward'])
            observation = new_observation.detach()
            terminate = done or len(episode_memory) >= self.env.max_episode_length
        episode_memory.cumul_reward()
        self.train_loader.memorize(episode_memory, episode_memory.memory_cell_names)
        self.train_dict['rewards'] += [episode_reward]
        return episode_reward

    def fit_epoch(self, verbose=1):
        self.model.train()
        losses = []
        loader = DataLoader(self.train_loader, batch_size=self.batch_size, shuffle=True)
        for batch, (state, action, reward) in tqdm(enumerate(loader)):
            state, action, reward = state.to(self.device), action.to(self.device), reward.to(self.device)
            log_prob = Categorical(self.model(state.squeeze(1))).log_prob(action)
            loss = self.crit(log_prob, reward)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            losses += [loss.item()]
        loss = np.mean(losses)
        self.train_dict['train_losses'] += [loss]
        if verbose == 1:
            print(f'average reward: {np.mean(self.train_dict["rewards"]):.2f}')
        return loss


def train(agent, n_epochs, episodes_per_epoch=8):
    for epoch in range(n_epochs):
        for _ in range(episodes_per_epoch):
            agent.play_episode()
        agent.fit_epoch()
