# Source: https://github.com/NVIDIA/bionemo-framework/blob/105b4834eef2d0b9dc0d82a7fad194006166ac03/bionemo-recipes/recipes/esm2_native_te/perf_logger.py
# Report: audit (correct code, leaking variant avoided): the ESM-2 recipe's PerfLogger.log_micro_step receives the MaskedLMOutput of every micro-step and adds outputs.loss into a running GPU tensor on self, inside torch.no_grad() and with .detach(); written without them, the running loss links every micro-step's graph to the next across all optimizer steps
# Shape: a perf logger object gets the whole HF-style output (out.loss) each micro-step and sums out.loss into self._running_loss; log_step averages it every N steps and zero_()s it in place, which does not cut the autograd history
# Expect: TML001 line 64
import time

import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForMaskedLM, DataCollatorForLanguageModeling


class PerfLogger:
    def __init__(self, device, logging_frequency=50):
        self.logging_frequency = logging_frequency
        self.min_loss = torch.tensor(float("inf"), device=device)
        self._running_loss = torch.tensor(0.0, device=device)
        self._grad_acc_step_count = 0
        self._num_unpadded_tokens = 0
        self._prev_time = time.perf_counter()

    def log_micro_step(self, step, batch, outputs):
        self._grad_acc_step_count += 1
        self._running_loss += outputs.loss
        if step % self.logging_frequency == 0 and step > 0:
            # 1 is the padding id of the ESM-2 tokenizer
            self._num_unpadded_tokens += batch["input_ids"][batch["input_ids"] != 1].numel()

    def log_step(self, step, grad_norm, lr):
        with torch.no_grad():
            if step % self.logging_frequency == 0 and step > 0:
                avg_loss = self._running_loss / self._grad_acc_step_count
                self.min_loss = torch.minimum(self.min_loss, avg_loss)
                elapsed = (time.perf_counter() - self._prev_time) / self.logging_frequency
                self._prev_time = time.perf_counter()
                print(
                    f"step {step} loss {avg_loss.item():.4f} min {self.min_loss.item():.4f} "
                    f"grad_norm {float(grad_norm):.3f} lr {lr:.2e} "
                    f"unpadded tok/s {self._num_unpadded_tokens / elapsed:.0f}"
                )
            self._running_loss.zero_()
            self._grad_acc_step_count = 0
            self._num_unpadded_tokens = 0


def train(dataset, tokenizer, num_train_steps=10_000, grad_acc_steps=4, device="cuda"):
    model = AutoModelForMaskedLM.from_pretrained("facebook/esm2_t12_35M_UR50D").to(device)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    loader = DataLoader(dataset, batch_size=16, shuffle=True, collate_fn=collator, drop_last=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=4e-4, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 2000))
    perf_logger = PerfLogger(device)
    data_iter = iter(loader)
    model.train()
    for step in range(num_train_steps):
        for _ in range(grad_acc_steps):
            try:
                batch = next(data_iter)
            except StopIteration:
                data_iter = iter(loader)
                batch = next(data_iter)
            batch = {k: v.to(device) for k, v in batch.items()}
            outputs = model(**batch)
            (outputs.loss / grad_acc_steps).backward()
            perf_logger.log_micro_step(step, batch, outputs)  # expect: TML001
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        perf_logger.log_step(step, grad_norm, scheduler.get_last_lr()[0])
    return model
