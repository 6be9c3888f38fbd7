# Source: https://github.com/vsingh1998/NNTI_CV_project/blob/3a118725c753ce9b16d8a3131b41b1b64ca01246/Task2_VAT/vat.py
# Report: audit of a CIFAR semi-supervised VAT loss: the power iteration in VATLoss.forward() rebinds r to its own .grad (normalised) after each backward, which carries no graph, and zeroes the model grads before the final perturbed pass
# Shape: VATLoss nn.Module called once per step from a train() helper on unlabeled batches; r = normalize(r.grad) reads its previous value by name but only through .grad
# Expect: near-miss: must be silent
import torch
import torch.nn as nn
import torch.nn.functional as F


def l2_normalize(d):
    flat = d.view(d.size(0), -1)
    return (flat / (flat.norm(dim=1, keepdim=True) + 1e-8)).view_as(d)


class VATLoss(nn.Module):
    def __init__(self, xi=10.0, eps=8.0, vat_iter=1):
        super().__init__()
        self.xi, self.eps, self.vat_iter = xi, eps, vat_iter

    def forward(self, model, x):
        with torch.no_grad():
            clean = F.softmax(model(x), dim=1)
        r = l2_normalize(torch.randn_like(x))
        for _ in range(self.vat_iter):
            r.requires_grad_()
            adv_logp = F.log_softmax(model(x + self.xi * r), dim=1)
            adv_distance = F.kl_div(adv_logp, clean, reduction="batchmean")
            adv_distance.backward()
            r = l2_normalize(r.grad)
            model.zero_grad()
        adv_logp = F.log_softmax(model(x + self.eps * r), dim=1)
        return F.kl_div(adv_logp, clean, reduction="batchmean")


def train(model, labeled_loader, unlabeled_loader, epochs, alpha=1.0, vat_iter=2, log_every=100):
    opt = torch.optim.SGD(model.parameters(), lr=0.03, momentum=0.9, nesterov=True)
    vat = VATLoss(vat_iter=vat_iter)
    history = {"ce": [], "vat": []}
    for epoch in range(epochs):
        model.train()
        for step, ((x_l, y_l), (x_u, _)) in enumerate(zip(labeled_loader, unlabeled_loader)):
            x_l, y_l, x_u = x_l.cuda(), y_l.cuda(), x_u.cuda()
            lds = vat(model, x_u)
            ce = F.cross_entropy(model(x_l), y_l)
            loss = ce + alpha * lds
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % log_every == 0:
                history["ce"].append(ce.item())
                history["vat"].append(lds.item())
                print(f"epoch {epoch} step {step} ce {ce.item():.4f} vat {lds.item():.4f}")
    return history
