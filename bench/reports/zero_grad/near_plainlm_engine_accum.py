# Source: https://github.com/Niccolo-Ajroldi/plainLM/blob/0e910c8d611191c84b59282ad4a9ec3b29c4cdf7/engine/engine.py
# Report: plainLM's TorchEngine wraps a DDP language model with autocast + GradScaler and gradient accumulation: DDP grad sync only on the last micro-step, scaler.step/update then zero_grad(set_to_none=True) at each accumulation boundary
# Shape: the gradient reset sits on the same path as scaler.step(); step() returns loss.detach() * accum, which the train loop keeps in a list it empties every log_every_steps; eval() is @torch.no_grad and all-reduces a Python float
# Expect: near-miss: must be silent
from contextlib import nullcontext

import torch
from torch import distributed as dist
from torch.nn import CrossEntropyLoss
from torch.nn.parallel import DistributedDataParallel as DDP


def _move_to_device(batch, seq_len, device):
    inputs = batch['input_ids'][:, :seq_len]
    targets = batch['input_ids'][:, 1:(seq_len + 1)]
    inputs = inputs.pin_memory().to(device, non_blocking=True)
    targets = targets.pin_memory().to(device, non_blocking=True)
    return inputs, targets


class TorchEngine(torch.nn.Module):
    """Model, optimizer, scheduler and grad scaler; one call of step() per micro-batch."""

    def __init__(self, model, cfg, device, local_rank, optimizer, scheduler):
        super().__init__()
        self.accumulated_samples = 0
        self.seq_len = cfg.seq_len
        self.accumulation_steps = cfg.grad_accumulation_steps
        self.grad_clip = cfg.grad_clip
        self.device = device
        self.model = model.to(device)
        if dist.is_initialized():
            self.model = DDP(self.model, device_ids=[local_rank])
        ptdtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16, 'float16': torch.float16}[cfg.dtype]
        self.ctx = torch.amp.autocast(device_type='cuda', dtype=ptdtype) if 'cuda' in device else nullcontext()
        self.scaler = torch.amp.GradScaler(enabled=(cfg.dtype == 'float16'))
        self.criterion = CrossEntropyLoss()
        self.optimizer = optimizer
        self.scheduler = scheduler

    def step(self, batch):
        self.model.train()
        self.accumulated_samples += 1
        inputs, targets = _move_to_device(batch, self.seq_len, self.device)
        if dist.is_initialized():
            self.model.require_backward_grad_sync = (self.accumulated_samples == self.accumulation_steps)

        with self.ctx:
            output = self.model(inputs)
            logits = getattr(output, 'logits', output)
            loss = self.criterion(logits.view(-1, logits.size(-1)), targets.view(-1))
            loss = loss / self.accumulation_steps

        loss_val = loss.detach() * self.accumulation_steps
        if torch.isnan(loss_val):
            raise ValueError("Train loss is nan")

        self.scaler.scale(loss).backward()

        if self.accumulated_samples == self.accumulation_steps:
            self.accumulated_samples = 0
            if self.grad_clip:
                self.scaler.unscale_(self.optimizer)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad(set_to_none=True)
            if self.scheduler:
                self.scheduler.step()
        return loss_val

    @torch.no_grad()
    def eval(self, dataloader):
        self.model.eval()
        total_loss, num_batches = 0.0, 0
        for batch in dataloader:
            inputs, targets = _move_to_device(batch, self.seq_len, self.device)
            with self.ctx:
                logits = self.model(inputs)
                loss = self.criterion(logits.view(-1, logits.size(-1)), targets.view(-1))
            total_loss += loss.item()
            num_batches += 1
        if dist.is_initialized():
            t = torch.tensor([total_loss, num_batches], device=self.device)
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
            total_loss, num_batches = t[0].item(), t[1].item()
        return total_loss / num_batches


def train(engine, trainloader, validloader, cfg, log_fn, master_process):
    train_losses = []
    for micro_step, micro_batch in enumerate(trainloader, 1):
        step = micro_step // cfg.grad_accumulation_steps
        if step > cfg.steps_budget:
            break
        train_loss = engine.step(micro_batch)
        train_losses.append(train_loss)
        valid_loss = None
        if cfg.eval and step % cfg.eval_every_steps == 0:
            valid_loss = engine.eval(validloader)
        if step % cfg.log_every_steps == 0:
            if master_process:
                log_fn(micro_step, [t.item() for t in train_losses], valid_loss)
            train_losses = []
