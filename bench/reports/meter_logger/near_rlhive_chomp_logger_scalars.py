# Source: https://github.com/chandar-lab/RLHive/blob/main/hive/utils/loggers.py
# Report: RLHive's current ChompLogger.log_scalar converts tensor values with .item() before appending them to the per-metric lists; the agents still pass the raw loss tensor and torch.max(qvals)
# Shape: the call sites hand tensors to logger.log_scalar, but the callee stores value.item() for tensors, so the run-long lists only hold Python floats
# Expect: near-miss: must be silent
import copy

import numpy as np
import torch


class Chomp(dict):
    def __getitem__(self, key):
        return self.get(key)


class ChompLogger:
    def __init__(self, timescales, log_every=100):
        self._timescales = timescales
        self._steps = {t: 0 for t in timescales}
        self._log_every = log_every
        self._log_data = Chomp()

    def update_step(self, timescale):
        self._steps[timescale] += 1
        return self.should_log(timescale)

    def should_log(self, timescale):
        return self._steps[timescale] % self._log_every == 0

    def log_scalar(self, name, value, timescale):
        metric_name = f"{timescale}_{name}"
        if self._log_data[metric_name] is None:
            self._log_data[metric_name] = [[], []]
        if isinstance(value, torch.Tensor):
            self._log_data[metric_name][0].append(value.item())
        else:
            self._log_data[metric_name][0].append(value)
        self._log_data[metric_name][1].append([self._steps[t] for t in self._timescales])


class DQNAgent:
    def __init__(self, qnet, optimizer, replay_buffer, logger, device="cuda", discount=0.99, batch_size=32):
        self._qnet = qnet.to(device)
        self._target_qnet = copy.deepcopy(self._qnet).requires_grad_(False)
        self._optimizer = optimizer
        self._replay_buffer = replay_buffer
        self._logger = logger
        self._device = device
        self._discount = discount
        self._batch_size = batch_size
        self._timescale = "agent"
        self._rng = np.random.default_rng()
        self._episode_start = True

    @torch.no_grad()
    def act(self, observation, epsilon):
        obs = torch.tensor(np.expand_dims(observation, axis=0), device=self._device).float()
        qvals = self._qnet(obs)
        action = self._rng.integers(qvals.shape[-1]) if self._rng.random() < epsilon else torch.argmax(qvals).item()
        if self._logger.should_log(self._timescale) and self._episode_start:
            self._logger.log_scalar("train_qval", torch.max(qvals), self._timescale)
            self._episode_start = False
        return action

    def update(self, transition):
        self._episode_start = bool(transition["done"])
        self._replay_buffer.add(**transition)
        batch = self._replay_buffer.sample(self._batch_size, self._device)
        self._optimizer.zero_grad()
        pred_q = self._qnet(batch["observation"]).gather(1, batch["action"].long().unsqueeze(1)).squeeze(1)
        next_q = self._target_qnet(batch["next_observation"]).max(dim=-1)[0]
        targets = batch["reward"] + self._discount * next_q * (1 - batch["done"])
        loss = torch.nn.functional.smooth_l1_loss(pred_q, targets)
        if self._logger.update_step(self._timescale):
            self._logger.log_scalar("train_loss", loss, self._timescale)
        loss.backward()
        self._optimizer.step()


def run(env, agent, num_steps, epsilon=0.05):
    observation = env.reset()
    for _ in range(num_steps):
        action = agent.act(observation, epsilon)
        next_observation, reward, done, _ = env.step(action)
        agent.update({"observation": observation, "action": action, "reward": reward,
                      "next_observation": next_observation, "done": done})
        observation = env.reset() if done else next_observation
