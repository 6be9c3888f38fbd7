# Source: https://github.com/OpenRLHF/OpenRLHF/blob/0082bf16e8ed0de1eb1d8e745f68dfbea5653fad/openrlhf/trainer/rm_trainer.py
# Report: audit of an RLHF reward-model trainer class: fit() keeps smoothed progress numbers acc_mean = acc_mean * 0.9 + 0.1 * acc and loss_mean = loss_mean * 0.9 + 0.1 * preference_loss.item() across all steps; correct in the repo, this variant drops the .item() on the loss
# Shape: loss_mean is bound once per epoch and rebuilt from its own previous value plus the attached pairwise loss every step, then handed to the logs dict and the wandb-style logger
# Expect: TML005 line 61
import torch
import torch.nn as nn
import torch.nn.functional as F


class PairWiseLoss(nn.Module):
    def forward(self, chosen_reward, reject_reward, margin=None):
        diff = chosen_reward - reject_reward
        if margin is not None:
            diff = diff - margin
        return -F.logsigmoid(diff).mean()


class RewardModelTrainer:
    def __init__(self, model, optimizer, scheduler, train_dataloader, eval_dataloader,
                 logger=None, max_epochs=2, max_norm=1.0, device="cuda"):
        self.model = model
        self.optimizer = optimizer
        self.scheduler = scheduler
        self.train_dataloader = train_dataloader
        self.eval_dataloader = eval_dataloader
        self.logger = logger
        self.epochs = max_epochs
        self.max_norm = max_norm
        self.device = device
        self.loss_fn = PairWiseLoss()

    def concatenated_forward(self, chosen_ids, c_mask, reject_ids, r_mask):
        # one forward over [chosen; rejected] instead of two
        input_ids = torch.cat([chosen_ids, reject_ids], dim=0)
        att_mask = torch.cat([c_mask, r_mask], dim=0)
        values = self.model(input_ids, attention_mask=att_mask)
        n = chosen_ids.shape[0]
        return values[:n], values[n:]

    def fit(self, eval_steps=500):
        step = 1
        for epoch in range(self.epochs):
            self.model.train()
            acc_mean = 0.0
            loss_mean = 0.0
            for chosen_ids, c_mask, reject_ids, r_mask in self.train_dataloader:
                chosen_ids, c_mask = chosen_ids.to(self.device), c_mask.to(self.device)
                reject_ids, r_mask = reject_ids.to(self.device), r_mask.to(self.device)
                chosen_reward, reject_reward = self.concatenated_forward(
                    chosen_ids, c_mask, reject_ids, r_mask)
                preference_loss = self.loss_fn(chosen_reward, reject_reward)

                self.optimizer.zero_grad()
                preference_loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
                self.optimizer.step()
                self.scheduler.step()

                acc = (chosen_reward > reject_reward).float().mean().item()
                acc_mean = acc_mean * 0.9 + 0.1 * acc
                loss_mean = loss_mean * 0.9 + 0.1 * preference_loss  # expect: TML005
                logs = {"loss": preference_loss.item(), "acc": acc,
                        "loss_mean": loss_mean, "acc_mean": acc_mean,
                        "lr": self.scheduler.get_last_lr()[0]}
                if self.logger is not None:
                    self.logger.log({f"train/{k}": v for k, v in logs.items()}, step=step)
                if step % eval_steps == 0:
                    self.evaluate(step)
                step += 1

    def evaluate(self, steps=0):
        self.model.eval()
        acc, loss_sum, n = 0.0, 0.0, 0
        with torch.no_grad():
            for chosen_ids, c_mask, reject_ids, r_mask in self.eval_dataloader:
                chosen_reward, reject_reward = self.concatenated_forward(
                    chosen_ids.to(self.device), c_mask.to(self.device),
                    reject_ids.to(self.device), r_mask.to(self.device))
                loss_sum += self.loss_fn(chosen_reward, reject_reward).item()
                acc += (chosen_reward > reject_reward).float().mean().item()
                n += 1
        if self.logger is not None:
            self.logger.log({"eval/loss": loss_sum / n, "eval/acc": acc / n}, step=steps)
        self.model.train()
