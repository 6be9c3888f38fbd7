# Source: https://github.com/codertimo/BERT-pytorch/blob/0867d0f026e68445247dfd3f21001a320dd5cb7c/bert_pytorch/trainer/pretrain.py
# Report: BERT pre-training trainer runs train and test through one iteration() helper; test() calls it with train=False and no grad-disabled context (issue #92 asks why, and notes it runs out of GPU memory).
# Shape: test() -> self.iteration(..., train=False): the helper's forward builds the MLM/NSP graph every test batch and backward is skipped, so each batch's activations are saved for a backward that never comes (peak), nothing wraps the call in no_grad.
# Expect: TML003 line 64
import torch
import torch.nn as nn


class ScheduledOptim:
    def __init__(self, optimizer, d_model, n_warmup_steps):
        self.optimizer = optimizer
        self.n_warmup_steps = n_warmup_steps
        self.init_lr = d_model ** -0.5
        self.n_steps = 0

    def zero_grad(self):
        self.optimizer.zero_grad()

    def step_and_update_lr(self):
        self.n_steps += 1
        scale = min(self.n_steps ** -0.5, self.n_steps * self.n_warmup_steps ** -1.5)
        for group in self.optimizer.param_groups:
            group["lr"] = self.init_lr * scale
        self.optimizer.step()


class PretrainTrainer:
    def __init__(self, lm_model, hidden, train_loader, test_loader=None, lr=1e-4, warmup=10000, log_freq=10):
        self.device = torch.device("cuda:0")
        self.model = lm_model.to(self.device)
        self.train_data = train_loader
        self.test_data = test_loader
        self.optim = torch.optim.AdamW(self.model.parameters(), lr=lr, weight_decay=0.01)
        self.schedule = ScheduledOptim(self.optim, hidden, warmup)
        self.mask_criterion = nn.NLLLoss(ignore_index=0)
        self.next_criterion = nn.NLLLoss()
        self.log_freq = log_freq

    def run_batches(self, epoch, loader, train=True):
        total_loss, correct, seen = 0.0, 0, 0
        for i, batch in enumerate(loader):
            batch = {k: v.to(self.device) for k, v in batch.items()}
            nsp_out, mlm_out = self.model(batch["bert_input"], batch["segment_label"])
            nsp_loss = self.next_criterion(nsp_out, batch["is_next"])
            mlm_loss = self.mask_criterion(mlm_out.transpose(1, 2), batch["bert_label"])
            loss = nsp_loss + mlm_loss
            if train:
                self.schedule.zero_grad()
                loss.backward()
                self.schedule.step_and_update_lr()
            correct += nsp_out.argmax(dim=-1).eq(batch["is_next"]).sum().item()
            total_loss += loss.item()
            seen += batch["is_next"].nelement()
            if i % self.log_freq == 0:
                print({"epoch": epoch, "iter": i, "avg_loss": total_loss / (i + 1),
                       "mlm": mlm_loss.item(), "nsp": nsp_loss.item()})
        mode = "train" if train else "test"
        print(f"EP{epoch}_{mode} avg_loss={total_loss / len(loader):.4f} acc={100.0 * correct / seen:.2f}")

    def train(self, epoch):
        self.run_batches(epoch, self.train_data)

    def test(self, epoch):
        self.run_batches(epoch, self.test_data, train=False)  # expect: TML003


def pretrain(trainer, epochs):
    for epoch in range(epochs):
        trainer.train(epoch)
        if trainer.test_data is not None:
            trainer.test(epoch)
