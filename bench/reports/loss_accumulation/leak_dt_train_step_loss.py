# Source: https://github.com/kzl/decision-transformer/blob/master/gym/decision_transformer/training/trainer.py
# Report: Decision Transformer's Trainer with train_step changed to return the loss tensor (to average it with torch.stack at the end of the iteration)
# Shape: SequenceTrainer.train_step() returns the graph-attached loss; the base class's train_iteration() appends it to train_losses for all num_steps steps
# Expect: TML001 line 30
import time

import numpy as np
import torch


class Trainer:
    def __init__(self, model, optimizer, batch_size, get_batch, loss_fn, scheduler=None, eval_fns=None):
        self.model = model
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.get_batch = get_batch
        self.loss_fn = loss_fn
        self.scheduler = scheduler
        self.eval_fns = eval_fns or []
        self.diagnostics = {}
        self.start_time = time.time()

    def train_iteration(self, num_steps, iter_num=0, print_logs=False):
        train_losses = []
        logs = {}
        t0 = time.time()
        self.model.train()
        for _ in range(num_steps):
            train_loss = self.train_step()
            train_losses.append(train_loss)  # expect: TML001
            if self.scheduler is not None:
                self.scheduler.step()
        logs["time/training"] = time.time() - t0

        self.model.eval()
        for eval_fn in self.eval_fns:
            for k, v in eval_fn(self.model).items():
                logs[f"evaluation/{k}"] = v

        stacked = torch.stack(train_losses)
        logs["training/train_loss_mean"] = stacked.mean().item()
        logs["training/train_loss_std"] = stacked.std().item()
        logs.update(self.diagnostics)
        if print_logs:
            print(f"Iteration {iter_num}")
            for k, v in logs.items():
                print(f"{k}: {v}")
        return logs

    def train_step(self):
        raise NotImplementedError


class SequenceTrainer(Trainer):
    def train_step(self):
        states, actions, rewards, dones, rtg, timesteps, mask = self.get_batch(self.batch_size)
        action_target = torch.clone(actions)

        _, action_preds, _ = self.model.forward(states, actions, rewards, rtg[:, :-1], timesteps, attention_mask=mask)

        act_dim = action_preds.shape[2]
        keep = mask.reshape(-1) > 0
        action_preds = action_preds.reshape(-1, act_dim)[keep]
        action_target = action_target.reshape(-1, act_dim)[keep]

        loss = self.loss_fn(None, action_preds, None, None, action_target, None)
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 0.25)
        self.optimizer.step()

        with torch.no_grad():
            self.diagnostics["training/action_error"] = torch.mean((action_preds - action_target) ** 2).detach().cpu().item()

        return loss
