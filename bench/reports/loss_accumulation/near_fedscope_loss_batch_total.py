# Source: https://github.com/alibaba/FederatedScope/blob/master/federatedscope/core/trainers/torch_trainer.py
# Report: fixed FederatedScope GeneralTorchTrainer._hook_on_batch_end: the routine-level loss total accumulates ctx.loss_batch.item() * ctx.batch_size
# Shape: hook-driven trainer: the graph-attached ctx.loss_batch is reduced to a float with .item() before it is added to ctx.loss_batch_total; predictions are kept as detached numpy arrays
# Expect: near-miss: must be silent
import numpy as np
import torch


class Context(dict):
    """Attribute-style context shared by all hooks of one training routine."""

    __getattr__ = dict.get

    def __setattr__(self, key, value):
        self[key] = value


class GeneralTorchTrainer:
    def __init__(self, model, train_loader, device, lr=0.01, grad_clip=-1.0):
        self.ctx = Context()
        self.ctx.model = model
        self.ctx.train_loader = train_loader
        self.ctx.device = device
        self.ctx.criterion = torch.nn.CrossEntropyLoss()
        self.ctx.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.ctx.grad_clip = grad_clip
        self.hooks_in_train = [
            self._hook_on_batch_forward,
            self._hook_on_batch_backward,
            self._hook_on_batch_end,
        ]

    def _hook_on_fit_start_init(self, ctx):
        ctx.model.to(ctx.device)
        ctx.model.train()
        ctx.loss_batch_total = 0
        ctx.num_samples = 0
        ctx.ys_true = []
        ctx.ys_prob = []

    def _hook_on_batch_forward(self, ctx):
        x, label = [t.to(ctx.device) for t in ctx.data_batch]
        pred = ctx.model(x)
        ctx.y_true = label
        ctx.y_prob = pred
        ctx.loss_batch = ctx.criterion(pred, label)
        ctx.batch_size = len(label)

    def _hook_on_batch_backward(self, ctx):
        ctx.optimizer.zero_grad()
        ctx.loss_batch.backward()
        if ctx.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(ctx.model.parameters(), ctx.grad_clip)
        ctx.optimizer.step()

    def _hook_on_batch_end(self, ctx):
        ctx.num_samples += ctx.batch_size
        ctx.loss_batch_total += ctx.loss_batch.item() * ctx.batch_size
        ctx.ys_true.append(ctx.y_true.detach().cpu().numpy())
        ctx.ys_prob.append(ctx.y_prob.detach().cpu().numpy())

    def _hook_on_fit_end(self, ctx):
        ys_true = np.concatenate(ctx.ys_true)
        ys_prob = np.concatenate(ctx.ys_prob)
        acc = float((ys_prob.argmax(axis=1) == ys_true).mean())
        avg_loss = ctx.loss_batch_total / max(ctx.num_samples, 1)
        ctx.eval_metrics = {"train_acc": acc, "train_avg_loss": float(avg_loss)}

    def train(self, local_update_steps=1):
        ctx = self.ctx
        self._hook_on_fit_start_init(ctx)
        for _ in range(local_update_steps):
            for batch in ctx.train_loader:
                ctx.data_batch = batch
                for hook in self.hooks_in_train:
                    hook(ctx)
                # batch-lifecycle variables are dropped once the batch is done
                for key in ("data_batch", "y_true", "y_prob", "loss_batch", "batch_size"):
                    ctx.pop(key, None)
        self._hook_on_fit_end(ctx)
        return ctx.num_samples, ctx.model.state_dict(), ctx.eval_metrics
