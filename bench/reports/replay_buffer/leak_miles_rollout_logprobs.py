# Source: https://github.com/radixark/miles/pull/1966
# Report: In PPO/OPD training, old-policy, rollout and teacher log-prob tensors could enter the persistent rollout data with a live autograd graph, retaining it and leaking gradients into the old-policy branch; the PR detaches them at the rollout-data boundary.
# Shape: A custom scoring path computes old-policy log-probs with grad enabled and appends them into the persistent rollout store, which holds every micro-batch's scoring graph until the update.
# Expect: TML001 line 27
import torch


class RolloutStore:
    def __init__(self):
        self.data = {"tokens": [], "log_probs": [], "advantages": []}

    def clear(self):
        for v in self.data.values():
            v.clear()


def token_log_probs(model, tokens):
    logits = model(tokens[:, :-1]).logits.float()
    return torch.log_softmax(logits, -1).gather(-1, tokens[:, 1:, None]).squeeze(-1)


def score_rollouts(model, batches, store: RolloutStore):
    for tokens, adv in batches:
        tokens = tokens.cuda()
        log_probs = token_log_probs(model, tokens)
        store.data["tokens"].append(tokens)
        store.data["log_probs"].append(log_probs)  # expect: TML001
        store.data["advantages"].append(adv.cuda())


def ppo_update(model, opt, store: RolloutStore, clip=0.2):
    for tokens, old_lp, adv in zip(*store.data.values()):
        new_lp = token_log_probs(model, tokens)
        ratio = torch.exp(new_lp - old_lp)
        unclipped = ratio * adv[:, None]
        clipped = ratio.clamp(1 - clip, 1 + clip) * adv[:, None]
        loss = -torch.min(unclipped, clipped).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    store.clear()


def train(model, opt, rollout_iter, steps=1000):
    store = RolloutStore()
    for _ in range(steps):
        score_rollouts(model, next(rollout_iter), store)
        ppo_update(model, opt, store)
