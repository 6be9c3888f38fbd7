# Source: https://github.com/rll-research/url_benchmark/pull/32
# Report: CUDA memory kept increasing while computing the intrinsic reward with the RMS running mean/std helper; the PR adds torch.no_grad to utils.RMS to stop it.
# Shape: an APT-style agent computes a particle-based-entropy reward from encoder features that still carry autograd history; RMS.__call__ folds them into self.M / self.S, chaining every update onto the previous one.
# Expect: TML005 lines 23, 24
import torch
import torch.nn as nn


class RMS(object):
    """running mean and std"""

    def __init__(self, device, epsilon=1e-4, shape=(1,)):
        self.M = torch.zeros(shape, device=device)
        self.S = torch.ones(shape, device=device)
        self.n = epsilon

    def __call__(self, x):
        bs = x.size(0)
        delta = torch.mean(x, dim=0) - self.M
        new_M = self.M + delta * bs / (self.n + bs)
        new_S = (self.S * self.n + torch.var(x, dim=0) * bs
                 + torch.square(delta) * self.n * bs / (self.n + bs)) / (self.n + bs)
        self.M = new_M  # expect: TML005
        self.S = new_S  # expect: TML005
        self.n += bs
        return self.M, self.S


class APTAgent(nn.Module):
    def __init__(self, encoder, predictor, actor_critic, knn_k=12, device="cuda"):
        super().__init__()
        self.encoder = encoder
        self.predictor = predictor
        self.actor_critic = actor_critic
        self.knn_k = knn_k
        self.rms = RMS(device)

    def particle_entropy_reward(self, rep):
        dist = torch.cdist(rep, rep)
        knn, _ = dist.topk(self.knn_k, dim=1, largest=False)
        _, moving_std = self.rms(knn)
        knn = knn / moving_std
        return torch.log(1.0 + knn.mean(dim=1, keepdim=True))

    def update(self, obs, action, next_obs, discount):
        rep = self.predictor(self.encoder(next_obs))
        intr_reward = self.particle_entropy_reward(rep)
        critic_loss = self.actor_critic.critic_loss(obs, action, intr_reward.detach(), next_obs, discount)
        actor_loss = self.actor_critic.actor_loss(obs)
        self.actor_critic.step(critic_loss, actor_loss)
        return {"intr_reward": intr_reward.mean().item(), "critic_loss": critic_loss.item()}
