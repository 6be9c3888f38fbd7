# Source: https://github.com/swiss-ai/modern_rnns/blob/d954970319107fdd737ba2a317b104794c7ab61c/trainers/dyck_trainer.py
# Report: step-based trainer class for recurrent models on the Dyck task; the recurrent state is carried from one training batch to the next and cut from its history by a detach helper after each optimizer step.
# Shape: logits, state = self.model(inputs, state) is loop-carried, but state = self._detach_state(state) (detach on a tensor, dict or list of (h, c)) runs every iteration, so each step's graph is freed; evaluate() carries state under torch.no_grad().
# Expect: near-miss: must be silent
import os

import torch


class StepTrainer:
    def __init__(self, model, train_loader, eval_loader, optimizer, device, max_steps=50000, eval_every=1000, logger=None):
        self.model = model
        self.train_loader = train_loader
        self.eval_loader = eval_loader
        self.optimizer = optimizer
        self.device = device
        self.max_steps = max_steps
        self.eval_every = eval_every
        self.logger = logger
        self.criterion = torch.nn.CrossEntropyLoss()

    def train(self):
        self.model.train()
        step = 0
        state = self._init_state()
        while step < self.max_steps:
            inputs, targets = next(self.train_loader)
            logits, state = self.model(inputs, state)
            loss = self.criterion(logits, targets)

            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

            # cut the carried state from this step's graph
            state = self._detach_state(state)

            if step % 100 == 0 and self.logger:
                self.logger.log({"train/loss": loss.item()}, step)
            if step % self.eval_every == 0 and step > 0:
                self.evaluate(step)
            step += 1
        self.evaluate(step)
        self.save_checkpoint(step)

    def evaluate(self, step, n_batches=10):
        self.model.eval()
        total_loss, correct, seen = 0.0, 0, 0
        state = self._init_state()
        with torch.no_grad():
            for _ in range(n_batches):
                inputs, targets = next(self.eval_loader)
                logits, state = self.model(inputs, state)
                total_loss += self.criterion(logits, targets).item()
                preds = torch.argmax(logits, dim=2)
                labels = torch.argmax(targets, dim=2)
                correct += (preds == labels).sum().item()
                seen += targets.size(0) * targets.size(1)
        if self.logger:
            self.logger.log({"eval/loss": total_loss / n_batches, "eval/accuracy": correct / seen}, step)
        self.model.train()

    def _init_state(self):
        model = self.model.module if isinstance(self.model, torch.nn.parallel.DistributedDataParallel) else self.model
        return model.get_init_state(batch_size=self.train_loader.batch_size, device=self.device)

    def _detach_state(self, state):
        if state is None:
            return None
        if isinstance(state, dict):
            return {k: v.detach() if v is not None else None for k, v in state.items()}
        if isinstance(state, list):
            return [(h.detach(), c.detach()) for h, c in state]
        return state.detach()

    def save_checkpoint(self, step, path="checkpoints"):
        os.makedirs(path, exist_ok=True)
        torch.save({"step": step, "model_state_dict": self.model.state_dict(),
                    "opt_state_dict": self.optimizer.state_dict()}, os.path.join(path, "model.pt"))
