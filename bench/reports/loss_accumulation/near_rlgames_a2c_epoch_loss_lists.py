# Source: https://github.com/Denys88/rl_games/blob/262cf20258360ce50c4b73694210bbdc8b0d58ad/rl_games/common/a2c_common.py
# Report: rl_games ContinuousA2CBase.train_epoch with the per-minibatch a_loss, c_loss and entropy reduced to Python floats before they are collected for the tensorboard means
# Shape: calc_gradients still returns the graph-attached losses through self.train_result, but train_epoch appends loss.item() to the epoch lists, so nothing of the minibatch graph (or device storage) outlives the iteration; write_stats averages floats
# Expect: near-miss: must be silent
import torch
import torch.nn as nn


def mean_list(val):
    return sum(val) / max(len(val), 1)


class ContinuousA2CAgent:
    def __init__(self, model, optimizer, dataset, writer, mini_epochs_num=5, e_clip=0.2, critic_coef=4.0, entropy_coef=0.0):
        self.model = model
        self.optimizer = optimizer
        self.dataset = dataset
        self.writer = writer
        self.mini_epochs_num = mini_epochs_num
        self.e_clip = e_clip
        self.critic_coef = critic_coef
        self.entropy_coef = entropy_coef
        self.scaler = torch.cuda.amp.GradScaler()
        self.train_result = None

    def actor_loss(self, old_neglogp, neglogp, advantage):
        ratio = torch.exp(old_neglogp - neglogp)
        surr1 = advantage * ratio
        surr2 = advantage * torch.clamp(ratio, 1.0 - self.e_clip, 1.0 + self.e_clip)
        return torch.max(-surr1, -surr2)

    def calc_losses(self, old_neglogp, neglogp, advantage, values, returns, entropy):
        a_loss = self.actor_loss(old_neglogp, neglogp, advantage).mean()
        c_loss = (returns - values).pow(2).mean()
        entropy = entropy.mean()
        loss = a_loss + 0.5 * c_loss * self.critic_coef - entropy * self.entropy_coef
        return loss, a_loss, c_loss, entropy

    def calc_gradients(self, input_dict):
        batch_dict = {"is_train": True, "prev_actions": input_dict["actions"], "obs": input_dict["obs"]}
        with torch.amp.autocast("cuda"):
            res_dict = self.model(batch_dict)
            loss, a_loss, c_loss, entropy = self.calc_losses(
                input_dict["old_logp_actions"],
                res_dict["prev_neglogp"],
                input_dict["advantages"],
                res_dict["values"],
                input_dict["returns"],
                res_dict["entropy"],
            )
            for param in self.model.parameters():
                param.grad = None
        self.scaler.scale(loss).backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        with torch.no_grad():
            mu = res_dict["mus"].detach()
        self.train_result = (a_loss, c_loss, entropy, mu)

    def train_actor_critic(self, input_dict):
        self.calc_gradients(input_dict)
        return self.train_result

    def write_stats(self, frame, a_losses, c_losses, entropies):
        self.writer.add_scalar("losses/a_loss", mean_list(a_losses), frame)
        self.writer.add_scalar("losses/c_loss", mean_list(c_losses), frame)
        self.writer.add_scalar("losses/entropy", mean_list(entropies), frame)

    def train_epoch(self, frame):
        self.model.train()
        a_losses = []
        c_losses = []
        entropies = []
        for mini_ep in range(0, self.mini_epochs_num):
            self.dataset.apply_permutation()
            for i in range(len(self.dataset)):
                a_loss, c_loss, entropy, cmu = self.train_actor_critic(self.dataset[i])
                a_losses.append(a_loss.item())
                c_losses.append(c_loss.item())
                entropies.append(entropy.item())
        self.write_stats(frame, a_losses, c_losses, entropies)
