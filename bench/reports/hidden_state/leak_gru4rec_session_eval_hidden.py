# Source: https://github.com/hungthanhpham94/GRU4REC-pytorch/blob/3b2c9eb4069da98aab831911720d2dbff580f08a/lib/evaluation.py
# Report: audit of a GRU4Rec port: the session-parallel evaluation carries the GRU hidden state from batch to batch; the repo runs it inside torch.no_grad() (and detaches in training) - this is the variant it avoided, where the evaluation loop has no no_grad and the carried hidden links every batch's graph to the previous one for the whole validation set
# Shape: Trainer.train_epoch() detaches the carried hidden state correctly; Evaluation.eval() calls model.eval() and then carries `logit, hidden = self.model(inp, hidden)` across batches with grad enabled
# Expect: TML005 line 57; TML003 line 57
import numpy as np
import torch
from tqdm import tqdm

from lib.data import SessionParallelLoader
from lib.metric import recall_mrr_at_k


def reset_hidden(hidden, mask):
    """Zero the hidden rows of sessions that ended in the previous step."""
    if len(mask) != 0:
        keep = torch.ones(1, hidden.size(1), 1, device=hidden.device)
        keep[:, mask] = 0
        hidden = hidden * keep
    return hidden


class Trainer:
    def __init__(self, model, train_data, optim, loss_func, batch_size, device):
        self.model, self.train_data, self.optim = model, train_data, optim
        self.loss_func, self.batch_size, self.device = loss_func, batch_size, device

    def train_epoch(self):
        self.model.train()
        losses = []
        hidden = self.model.init_hidden()
        loader = SessionParallelLoader(self.train_data, self.batch_size)
        for inp, target, mask in tqdm(loader, miniters=1000):
            inp, target = inp.to(self.device), target.to(self.device)
            self.optim.zero_grad()
            hidden = reset_hidden(hidden, mask).detach()
            logit, hidden = self.model(inp, hidden)
            # sampled output: the other items of the mini-batch act as negatives
            loss = self.loss_func(logit[:, target.view(-1)])
            losses.append(loss.item())
            loss.backward()
            self.optim.step()
        return float(np.mean(losses))


class Evaluation:
    def __init__(self, model, loss_func, device, k=20):
        self.model, self.loss_func, self.device, self.topk = model, loss_func, device, k

    def eval(self, eval_data, batch_size):
        self.model.eval()
        losses, recalls, mrrs = [], [], []
        loader = SessionParallelLoader(eval_data, batch_size)
        hidden = self.model.init_hidden()
        for inp, target, mask in tqdm(loader, miniters=1000):
            inp, target = inp.to(self.device), target.to(self.device)
            hidden = reset_hidden(hidden, mask)
            logit, hidden = self.model(inp, hidden)  # expect: TML005, TML003
            loss = self.loss_func(logit[:, target.view(-1)])
            recall, mrr = recall_mrr_at_k(logit, target, k=self.topk)
            losses.append(loss.item())
            recalls.append(float(recall))
            mrrs.append(float(mrr))
        return float(np.mean(losses)), float(np.mean(recalls)), float(np.mean(mrrs))


def fit(model, train_data, valid_data, optim, loss_func, epochs=10, batch_size=50, device="cuda"):
    trainer = Trainer(model, train_data, optim, loss_func, batch_size, device)
    evaluation = Evaluation(model, loss_func, device)
    for epoch in range(epochs):
        train_loss = trainer.train_epoch()
        loss, recall, mrr = evaluation.eval(valid_data, batch_size)
        print(f"epoch {epoch} train {train_loss:.4f} valid {loss:.4f} recall@20 {recall:.4f} mrr@20 {mrr:.4f}")
        torch.save({"model": model.state_dict(), "epoch": epoch, "recall": recall}, f"checkpoint/model_{epoch:05d}.pt")
