# Source: https://github.com/NM512/dreamerv3-torch/blob/02c3d45fcfc488151dd6ac7e3e905b55031c8d8f/models.py
# Report: DreamerV3 normalises imagined lambda-returns with RewardEMA, a running 5%/95% quantile kept on self.values; the repository flattens x.detach() before torch.quantile so the EMA never joins the actor/value graph
# Shape: the repository idiom: returns are flattened from x.detach() before the quantile, so the self.values EMA is a plain running statistic; the rest (slow target via .data, to_np metrics) as in the repository
# Expect: near-miss: must be silent
import copy

import torch
from torch import nn

to_np = lambda x: x.detach().cpu().numpy()


class RewardEMA(object):
    """running mean and std"""

    def __init__(self, device, alpha=1e-2):
        self.device = device
        self.values = torch.zeros((2,)).to(device)
        self.alpha = alpha
        self.range = torch.tensor([0.05, 0.95]).to(device)

    def __call__(self, x):
        flat_x = torch.flatten(x.detach())
        x_quantile = torch.quantile(input=flat_x, q=self.range)
        self.values = self.alpha * x_quantile + (1 - self.alpha) * self.values
        scale = torch.clip(self.values[1] - self.values[0], min=1.0)
        offset = self.values[0]
        return offset.detach(), scale.detach()


class ImagBehavior(nn.Module):
    def __init__(self, config, world_model, actor, value):
        super().__init__()
        self._config = config
        self._world_model = world_model
        self.actor = actor
        self.value = value
        self._slow_value = copy.deepcopy(self.value)
        self._updates = 0
        self._actor_opt = torch.optim.Adam(self.actor.parameters(), lr=config.actor_lr)
        self._value_opt = torch.optim.Adam(self.value.parameters(), lr=config.value_lr)
        self.reward_ema = RewardEMA(device=config.device)

    def _update_slow_target(self):
        if self._updates % self._config.slow_target_update == 0:
            mix = self._config.slow_target_fraction
            for s, d in zip(self.value.parameters(), self._slow_value.parameters()):
                d.data = mix * s.data + (1 - mix) * d.data
        self._updates += 1

    def _compute_actor_loss(self, imag_feat, imag_action, target, weights):
        policy = self.actor(imag_feat)
        offset, scale = self.reward_ema(target)
        normed_target = (target - offset) / scale
        normed_base = (self.value(imag_feat[:-1]).mode() - offset) / scale
        adv = normed_target - normed_base
        actor_target = policy.log_prob(imag_action)[:-1][:, :, None] * adv.detach()
        actor_loss = -torch.mean(weights[:-1] * actor_target)
        return actor_loss, {"EMA_005": to_np(offset), "EMA_095": to_np(offset + scale)}

    def _train(self, start, objective):
        self._update_slow_target()
        imag_feat, imag_state, imag_action = self._world_model.imagine(
            start, self.actor, self._config.imag_horizon
        )
        reward = objective(imag_feat, imag_state, imag_action)
        value = self.value(imag_feat).mode()
        discount = self._config.discount * torch.ones_like(reward)
        target = self._world_model.lambda_return(
            reward[:-1], value[:-1], discount[:-1], bootstrap=value[-1]
        )
        weights = torch.cumprod(torch.cat([torch.ones_like(discount[:1]), discount[:-1]], 0), 0)
        actor_loss, metrics = self._compute_actor_loss(imag_feat, imag_action, target, weights)

        value_pred = self.value(imag_feat[:-1].detach())
        value_loss = -value_pred.log_prob(target.detach()).mean()

        self._actor_opt.zero_grad()
        actor_loss.backward()
        self._actor_opt.step()
        self._value_opt.zero_grad()
        value_loss.backward()
        self._value_opt.step()
        metrics["actor_loss"] = to_np(actor_loss)
        metrics["value_loss"] = to_np(value_loss)
        return metrics


def train_behavior(behavior, replay, wm, steps):
    logs = []
    for _ in range(steps):
        post = wm.observe_batch(next(replay))
        start = {k: v.detach() for k, v in post.items()}
        logs.append(behavior._train(start, wm.reward_objective))
    return logs
