# Source: https://github.com/nstalways/23-Fashion-How/blob/b287712a7f73f2870f5aa5ba497c75f48fc7185b/sub_task3/gaia.py
# Report: audited bug: the SI continual-learning trainer appends the graph-attached loss to an epoch list; this is the fixed variant (gAIa.train; surrogate_loss in sub_task3/si.py; ETRI Fashion-How continual-learning baseline)
# Shape: gAIa.train with its SI bookkeeping (W[n].add_ on p.detach(), p_old snapshots) and the surrogate_loss helper whose local list is summed for backward; the epoch list gets loss.item(), a float
# Expect: near-miss: must be silent
import os
import timeit

import torch
import torch.nn as nn
from tqdm import tqdm

si_c = 0.1
epsilon = 0.001


def surrogate_loss(_model):
    """calculate SI's surrogate loss"""
    try:
        losses = []
        for n, p in _model.named_parameters():
            if p.requires_grad:
                n = n.replace(".", "__")
                prev_values = getattr(_model, "{}_SI_prev_task".format(n))
                omega = getattr(_model, "{}_SI_omega".format(n))
                losses.append((omega * (p - prev_values) ** 2).sum())
        return sum(losses)
    except AttributeError:
        return torch.tensor(0.0)


class gAIa(object):
    def __init__(self, model, dataloader, args, device):
        self._device = device
        self._model = model
        self._dataloader = dataloader
        self._batch_size = args.batch_size
        self._epochs = args.epochs
        self._max_grad_norm = args.max_grad_norm
        self._save_freq = args.save_freq
        self._model_path = args.model_path
        self._use_cl = args.use_cl
        self._optimizer = torch.optim.SGD(self._model.parameters(), lr=args.learning_rate)
        self._criterion = nn.CrossEntropyLoss()

    def _get_loss(self, batch):
        dlg, crd, rnk = batch
        logits, _ = self._model(dlg, crd)
        return self._criterion(logits, rnk) * self._batch_size

    def train(self, init_epoch=1):
        self._model.to(self._device)
        W = {}
        p_old = {}
        for n, p in self._model.named_parameters():
            if p.requires_grad:
                n = n.replace(".", "__")
                W[n] = p.data.clone().zero_()
                p_old[n] = p.data.clone()

        end_epoch = self._epochs + init_epoch
        for curr_epoch in range(init_epoch, end_epoch):
            time_start = timeit.default_timer()
            losses = []
            for batch in tqdm(self._dataloader):
                self._optimizer.zero_grad()
                batch = [t.to(self._device) for t in batch]
                loss_ce = self._get_loss(batch).mean()
                if self._use_cl:
                    loss = loss_ce + si_c * surrogate_loss(self._model)
                else:
                    loss = loss_ce
                loss.backward()
                nn.utils.clip_grad_norm_(self._model.parameters(), self._max_grad_norm)
                self._optimizer.step()
                losses.append(loss.item())
                for n, p in self._model.named_parameters():
                    if p.requires_grad:
                        n = n.replace(".", "__")
                        if p.grad is not None:
                            W[n].add_(-p.grad * (p.detach() - p_old[n]))
                        p_old[n] = p.detach().clone()
            time_end = timeit.default_timer()
            print("Epoch: {}/{}".format(curr_epoch, end_epoch - 1))
            print("Time: {:.2f}sec".format(time_end - time_start))
            print("Loss: {:.4f}".format(torch.mean(torch.tensor(losses))))
            if curr_epoch % self._save_freq == 0:
                file_name = os.path.join(self._model_path, "gAIa-{}.pt".format(curr_epoch))
                torch.save({"model": self._model.state_dict()}, file_name)
        return W
