# Source: https://github.com/shreejalt/freematch-pytorch/blob/836133000ac589c7a1d6a43e6e65470d5334a551/utils/losses.py
# Report: audit of a FreeMatch re-implementation: the self-adaptive threshold state (tau_t, p_t, label_hist) is an EMA of the weak-view softmax, recomputed in a helper decorated @torch.no_grad() and handed back to the trainer, which keeps it on self; the trainer line looks like it stores values derived from attached logits, but the helper's outputs carry no graph
# Shape: same SelfAdaptiveThreshold loss object with its _update_state helper under @torch.no_grad(); Trainer.train_step still unpacks the returned EMA triple into self.tau_t / self.p_t / self.label_hist each iteration
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


class MaskedConsistency:
    def __call__(self, logits, targets, mask):
        per_sample = F.cross_entropy(logits, targets, reduction="none")
        return (per_sample * mask).mean()


class SelfAdaptiveThreshold:
    def __init__(self, ema=0.999):
        self.ema = ema
        self.consistency = MaskedConsistency()

    @torch.no_grad()
    def _update_state(self, logits_w, tau_t, p_t, label_hist):
        probs = torch.softmax(logits_w, dim=-1)
        max_probs, max_idx = probs.max(dim=-1)
        tau_t = tau_t * self.ema + (1.0 - self.ema) * max_probs.mean()
        p_t = p_t * self.ema + (1.0 - self.ema) * probs.mean(dim=0)
        hist = torch.bincount(max_idx, minlength=p_t.shape[0]).to(p_t.dtype)
        label_hist = label_hist * self.ema + (1.0 - self.ema) * hist / hist.sum()
        return tau_t, p_t, label_hist

    def __call__(self, logits_w, logits_s, tau_t, p_t, label_hist):
        tau_t, p_t, label_hist = self._update_state(logits_w, tau_t, p_t, label_hist)
        probs_w = torch.softmax(logits_w.detach(), dim=-1)
        max_probs, pseudo = probs_w.max(dim=-1)
        class_scale = p_t / p_t.max()
        mask = max_probs.ge(tau_t * class_scale[pseudo]).float()
        return self.consistency(logits_s, pseudo, mask), mask, tau_t, p_t, label_hist


class FreeMatchTrainer:
    def __init__(self, model, optimizer, num_classes, device="cuda", lambda_u=1.0):
        self.model = model
        self.optimizer = optimizer
        self.lambda_u = lambda_u
        self.sat = SelfAdaptiveThreshold()
        self.tau_t = torch.tensor(1.0 / num_classes, device=device)
        self.p_t = torch.ones(num_classes, device=device) / num_classes
        self.label_hist = torch.ones(num_classes, device=device) / num_classes

    def train_step(self, x_lb, y_lb, x_w, x_s):
        n_lb = x_lb.size(0)
        logits = self.model(torch.cat([x_lb, x_w, x_s]))
        logits_w, logits_s = logits[n_lb:].chunk(2)
        sup_loss = F.cross_entropy(logits[:n_lb], y_lb)
        unsup_loss, mask, self.tau_t, self.p_t, self.label_hist = self.sat(logits_w, logits_s, self.tau_t, self.p_t, self.label_hist)
        loss = sup_loss + self.lambda_u * unsup_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"sup": sup_loss.item(), "unsup": unsup_loss.item(),
                "mask": mask.mean().item(), "tau": self.tau_t.item()}

    def fit(self, labeled_loader, unlabeled_loader, num_steps, device="cuda", log_every=100):
        self.model.train()
        lb_iter, ulb_iter = iter(labeled_loader), iter(unlabeled_loader)
        for step in range(num_steps):
            try:
                x_lb, y_lb = next(lb_iter)
            except StopIteration:
                lb_iter = iter(labeled_loader)
                x_lb, y_lb = next(lb_iter)
            try:
                (x_w, x_s), _ = next(ulb_iter)
            except StopIteration:
                ulb_iter = iter(unlabeled_loader)
                (x_w, x_s), _ = next(ulb_iter)
            stats = self.train_step(x_lb.to(device), y_lb.to(device), x_w.to(device), x_s.to(device))
            if step % log_every == 0:
                print(f"step {step}: " + ", ".join(f"{k}={v:.4f}" for k, v in stats.items()))
