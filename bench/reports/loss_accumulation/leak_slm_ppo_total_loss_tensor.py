# Source: https://github.com/kengz/SLM-Lab/commit/23dca2a2d8990e42cfb2c8d1f6cda3b466cd3f6a
# Report: SLM-Lab PPO.train() summed every minibatch loss of every PPO epoch into a device tensor (total_loss += loss); the fix turned it into a float with loss.item()
# Shape: total_loss is a CUDA tensor bound before the epoch/minibatch loops; loss = policy_loss + val_loss comes from the actor-critic forward and was already backpropagated inside net.train_step, so the in-place += chains every minibatch's loss node into one growing graph kept until train() returns
# Expect: TML001 line 74
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCriticNet(nn.Module):
    def __init__(self, in_dim, n_actions, clip_grad_val=0.5):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, 64), nn.Tanh())
        self.pi = nn.Linear(64, n_actions)
        self.v = nn.Linear(64, 1)
        self.clip_grad_val = clip_grad_val
        self.device = "cuda"

    def forward(self, x):
        h = self.body(x)
        return self.pi(h), self.v(h).squeeze(-1)

    def train_step(self, loss, optim):
        optim.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.parameters(), self.clip_grad_val)
        optim.step()
        return loss


def split_minibatch(batch, size):
    n = batch["states"].shape[0]
    idx = torch.randperm(n)
    return [{k: v[idx[i:i + size]] for k, v in batch.items()} for i in range(0, n, size)]


class PPO:
    def __init__(self, net, optim, training_epoch=4, minibatch_size=64, clip_eps=0.2, val_loss_coef=0.5):
        self.net = net
        self.optim = optim
        self.training_epoch = training_epoch
        self.minibatch_size = minibatch_size
        self.clip_eps = clip_eps
        self.val_loss_coef = val_loss_coef

    def calc_pdparam_v(self, minibatch):
        return self.net(minibatch["states"])

    def calc_policy_loss(self, minibatch, logits, advs):
        log_probs = torch.distributions.Categorical(logits=logits).log_prob(minibatch["actions"])
        ratios = torch.exp(log_probs - minibatch["old_log_probs"])
        sur_1 = ratios * advs
        sur_2 = torch.clamp(ratios, 1.0 - self.clip_eps, 1.0 + self.clip_eps) * advs
        return -torch.min(sur_1, sur_2).mean()

    def calc_val_loss(self, v_preds, v_targets):
        return self.val_loss_coef * F.mse_loss(v_preds, v_targets)

    def train(self, batch):
        with torch.no_grad():
            logits, v_preds = self.net(batch["states"])
            batch["old_log_probs"] = torch.distributions.Categorical(logits=logits).log_prob(batch["actions"])
            batch["advs"] = batch["returns"] - v_preds
            batch["v_targets"] = batch["returns"]
        total_loss = torch.tensor(0.0, device=self.net.device)
        for _ in range(self.training_epoch):
            minibatches = split_minibatch(batch, self.minibatch_size)
            for minibatch in minibatches:
                logits, v_preds = self.calc_pdparam_v(minibatch)
                policy_loss = self.calc_policy_loss(minibatch, logits, minibatch["advs"])
                val_loss = self.calc_val_loss(v_preds, minibatch["v_targets"])
                loss = policy_loss + val_loss
                self.net.train_step(loss, self.optim)
                total_loss += loss  # expect: TML001
        loss = total_loss / self.training_epoch / len(minibatches)
        return loss.item()
