# Source: https://github.com/ray-project/ray/pull/21291
# Report: torch MARWIL updated the policy's moving average of squared advantage norm inside the loss; the grad-fn chain grew every iteration until memory ran out
# Shape: policy._moving_average_sqd_adv_norm is updated in place (add_) from a graph-attached value that reads its own previous value, inside the per-step loss
# Expect: TML005 line 33
import torch

from ray.rllib.evaluation.postprocessing import Postprocessing
from ray.rllib.policy.sample_batch import SampleBatch
from ray.rllib.utils.torch_utils import explained_variance


class ValueNetworkMixin:
    def __init__(self):
        self._moving_average_sqd_adv_norm = torch.tensor(100.0, device=self.device)


def marwil_loss(policy, model, dist_class, train_batch):
    model_out, _ = model(train_batch)
    action_dist = dist_class(model_out, model)
    logprobs = action_dist.logp(train_batch[SampleBatch.ACTIONS])

    if policy.config["beta"] != 0.0:
        returns = train_batch[Postprocessing.ADVANTAGES]
        state_values = model.value_function()
        adv = returns - state_values
        adv_squared_mean = torch.mean(torch.pow(adv, 2.0))

        policy.explained_variance = torch.mean(
            explained_variance(returns, state_values)
        ).item()

        rate = policy.config["moving_average_sqd_adv_norm_update_rate"]
        policy._moving_average_sqd_adv_norm.add_(  # expect: TML005
            rate * (adv_squared_mean - policy._moving_average_sqd_adv_norm)
        )
        exp_advs = torch.exp(
            policy.config["beta"]
            * (adv / (1e-8 + torch.pow(policy._moving_average_sqd_adv_norm, 0.5)))
        ).detach()
        v_loss = 0.5 * adv_squared_mean
    else:
        exp_advs = 1.0
        v_loss = 0.0

    p_loss = -torch.mean(exp_advs * logprobs)
    total_loss = p_loss + policy.config["vf_coeff"] * v_loss
    policy.stats = {"policy_loss": p_loss.item(), "total_loss": total_loss.item()}
    return total_loss


def learn_offline(policy, model, dist_class, optimizer, batches):
    for train_batch in batches:
        loss = marwil_loss(policy, model, dist_class, train_batch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return policy.stats
