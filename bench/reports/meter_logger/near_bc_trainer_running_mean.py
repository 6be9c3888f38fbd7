# Source: https://github.com/SudeepDasari/data4robotics/blob/2e5b8052c35646b4fd286ed12794f64d58e85cb5/data4robotics/trainers/base.py
# Report: near-miss following the data4robotics trainer: training_step hands self.log() the Python float loss.item(), so the per-key trackers on the trainer hold only floats
# Shape: same self.log() -> tracker.append() store on self._trackers (uncapped list here), value detached to a float inside training_step before it travels
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


class RunningMean:
    def __init__(self):
        self._values = []

    def append(self, item):
        self._values.append(item)

    @property
    def mean(self):
        return sum(self._values) / len(self._values)


class BCTrainer:
    def __init__(self, policy, device_id=0, lr=1e-4, log_freq=100):
        self.device_id = device_id
        self.model = policy.to(device_id)
        self.optim = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.log_freq = log_freq
        self._trackers = dict()
        self._is_train = True

    def set_train(self):
        self._is_train = True
        self.model.train()

    def set_eval(self):
        self._is_train = False
        self.model.eval()
        for key in self._trackers:
            if key.startswith("eval/"):
                self._trackers[key] = RunningMean()

    def log(self, key, step, value):
        key = ("train/" if self._is_train else "eval/") + key
        if key not in self._trackers:
            self._trackers[key] = RunningMean()
        tracker = self._trackers[key]
        tracker.append(value)
        if step % self.log_freq == 0:
            print(f"{step} {key}: {float(tracker.mean):.4f}")

    def training_step(self, batch, step):
        (imgs, obs), actions = batch
        imgs = imgs.to(self.device_id)
        obs = obs.to(self.device_id)
        actions = actions.to(self.device_id)
        loss = self.model(imgs, obs, actions.flatten(1))
        self.log("bc_loss", step, loss.item())
        return loss


def finetune(policy, loader, max_iterations=50_000):
    trainer = BCTrainer(policy)
    trainer.set_train()
    it = iter(loader)
    for step in range(max_iterations):
        try:
            batch = next(it)
        except StopIteration:
            it = iter(loader)
            batch = next(it)
        trainer.optim.zero_grad()
        loss = trainer.training_step(batch, step)
        loss.backward()
        trainer.optim.step()
    return trainer
