# Source: https://github.com/CarperAI/trlx/blob/3340c2f3a56d1d14fdd5f13ad575121fa26b6d92/trlx/trainer/accelerate_base_trainer.py
# Report: trlx PPO (RLHF) learn loop, one edit away from the repo: stats_accum is hoisted out of the minibatch loop to average stats over the whole PPO epoch
# Shape: loss() (same class) returns a stats dict whose value-head entries (get_tensor_stats(values), values_error, ratio) are graph-attached; appending it to a list that now lives for the whole PPO epoch keeps, for every microbatch, the stats branches that backward never visits (their saved B x T tensors)
# Expect: TML001 line 76
import numpy as np
import torch


def flatten_dict(d, parent_key="", sep="/"):
    items = {}
    for k, v in d.items():
        key = parent_key + sep + k if parent_key else k
        if isinstance(v, dict):
            items.update(flatten_dict(v, key, sep))
        else:
            items[key] = v
    return items


def get_tensor_stats(xs, mask, n):
    mean = (xs * mask).sum() / n
    return dict(
        mean=mean,
        min=torch.where(mask.bool(), xs, np.inf).min(),
        max=torch.where(mask.bool(), xs, -np.inf).max(),
        std=torch.sqrt(((xs - mean) * mask).pow(2).sum() / n),
    )


class PPOTrainer:
    def __init__(self, model, opt, scheduler, accelerator, config, make_dataloader, minibatches):
        self.model, self.opt, self.scheduler, self.accelerator = model, opt, scheduler, accelerator
        self.config, self.create_train_dataloader, self.minibatches = config, make_dataloader, minibatches
        self.num_mb = config.num_mb
        self.iter_count = 0

    def loss(self, batch):
        device = self.accelerator.device
        tokens = batch.tokens.to(device)
        old_logprobs, old_values = batch.logprobs.to(device), batch.values.to(device)
        advantages, returns = batch.advantages.to(device), batch.returns.to(device)
        mask = batch.mask.to(device)
        outputs = self.model(tokens)
        logprobs = torch.log_softmax(outputs.logits[:, :-1], -1).gather(-1, tokens[:, 1:, None]).squeeze(-1)
        values = outputs.value[:, :-1]
        n = mask.sum()

        vf_loss = 0.5 * torch.sum(((values - returns) ** 2) * mask) / n
        log_ratio = (logprobs - old_logprobs) * mask
        ratio = torch.exp(log_ratio)
        with torch.no_grad():
            approx_kl = torch.mean((ratio - 1) - log_ratio)
        pg_loss1 = -advantages * ratio
        pg_loss2 = -advantages * torch.clamp(ratio, 1.0 - self.config.cliprange, 1.0 + self.config.cliprange)
        pg_loss = torch.sum(torch.max(pg_loss1, pg_loss2) * mask) / n
        loss = pg_loss + self.config.vf_coef * vf_loss

        stats = dict(
            losses=dict(total_loss=loss.item(), policy_loss=pg_loss.item(), value_loss=vf_loss.item()),
            values=dict(get_tensor_stats(values, mask, n), values_error=torch.sum(((values - returns) * mask) ** 2) / n),
            old_values=get_tensor_stats(old_values, mask, n),
            policy=dict(approx_kl=approx_kl.item()),
            ratio=(ratio * mask).sum() / n,
        )
        return loss, flatten_dict(stats)

    def learn(self):
        for _ in range(self.config.epochs):
            for _ in range(self.config.ppo_epochs):
                train_dataloader = self.create_train_dataloader()
                stats_accum = []
                for minibatch in self.minibatches(train_dataloader, self.num_mb):
                    for microbatch in minibatch:
                        loss, stats = self.loss(microbatch)
                        self.accelerator.backward(loss)
                        stats_accum.append(stats)  # expect: TML001
                    stats = {key: sum([s[key] for s in stats_accum]) / len(stats_accum) for key in stats_accum[0]}
                    self.opt.step()
                    self.opt.zero_grad()
                    self.scheduler.step()
                    self.iter_count += 1
                    self.accelerator.log(stats, step=self.iter_count)
