# Source: https://github.com/nstalways/23-Fashion-How/blob/b287712a7f73f2870f5aa5ba497c75f48fc7185b/sub_task3/gaia.py
# Report: audited correct idiom: Synaptic Intelligence accumulates W[n].add_(-p.grad * (p.detach() - p_old[n])) after every optimizer step, so the running importance holds no graph (SI path-integral update in gAIa.train; update_omega in sub_task3/si.py)
# Shape: the same SI bookkeeping moved into a helper method called per step (the value travels through W); the leak is the original with its p.detach() safeguard removed, so W[n] is chained to a new graph node (saving p.grad) every step
# Expect: TML001 line 37; TML005 line 37
import torch
import torch.nn as nn

si_c = 0.1
epsilon = 0.001


class SITrainer(object):
    def __init__(self, model, dataloader, criterion, device, lr=0.01, max_grad_norm=40.0):
        self._model = model.to(device)
        self._dataloader = dataloader
        self._criterion = criterion
        self._device = device
        self._max_grad_norm = max_grad_norm
        self._optimizer = torch.optim.SGD(self._model.parameters(), lr=lr)

    def _init_importance(self):
        W = {}
        p_old = {}
        for n, p in self._model.named_parameters():
            if p.requires_grad:
                n = n.replace(".", "__")
                W[n] = p.data.clone().zero_()
                p_old[n] = p.data.clone()
        return W, p_old

    def _update_importance(self, W, p_old):
        """Update the running parameter importance estimates in W."""
        for n, p in self._model.named_parameters():
            if p.requires_grad:
                n = n.replace(".", "__")
                if p.grad is not None:
                    W[n].add_(-p.grad * (p - p_old[n]))  # expect: TML001, TML005
                p_old[n] = p.detach().clone()

    def _update_omega(self, W):
        for n, p in self._model.named_parameters():
            if p.requires_grad:
                n = n.replace(".", "__")
                p_prev = getattr(self._model, "{}_SI_prev_task".format(n))
                p_current = p.detach().clone()
                omega_add = W[n] / ((p_current - p_prev) ** 2 + epsilon)
                omega = getattr(self._model, "{}_SI_omega".format(n))
                self._model.register_buffer("{}_SI_prev_task".format(n), p_current)
                self._model.register_buffer("{}_SI_omega".format(n), omega + omega_add)

    def train(self, epochs):
        W, p_old = self._init_importance()
        for epoch in range(epochs):
            running = 0.0
            for dlg, crd, rnk in self._dataloader:
                dlg, crd, rnk = dlg.to(self._device), crd.to(self._device), rnk.to(self._device)
                self._optimizer.zero_grad()
                logits, _ = self._model(dlg, crd)
                loss = self._criterion(logits, rnk)
                loss.backward()
                nn.utils.clip_grad_norm_(self._model.parameters(), self._max_grad_norm)
                self._optimizer.step()
                running += loss.item()
                self._update_importance(W, p_old)
            print("Epoch {}: loss {:.4f}".format(epoch, running / len(self._dataloader)))
        self._update_omega(W)
