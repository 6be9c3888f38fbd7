# Source: https://github.com/tliobnih/upplementary-D.2.-Pseudolabeling-experiments/blob/ad8aa3f39b710276474eae1ab2f93547d5ed03a0/src/vat_c.py
# Report: pseudo-label + VAT self-training: the VAT power iteration calls adv_distance.backward() only to read d.grad, while every model parameter still requires grad
# Shape: the backward also walks the whole network and fills parameter .grad buffers nobody wants (they are wiped by the later optimizer.zero_grad()); torch.autograd.grad(adv_distance, d) would return the input gradient alone
# Expect: TML020 line 38
import numpy as np
import torch
import torch.nn.functional as nfunc
from tqdm import tqdm


def _l2_normalize(d):
    t = d.clone()
    norm = torch.sqrt(torch.sum(t.view(d.shape[0], -1) ** 2, dim=1))
    norm = norm.reshape(-1, *([1] * (t.dim() - 1)))
    return t / (norm + 1e-10)


class VAT(object):
    def __init__(self, device, eps, xi, k=1):
        self.device = device
        self.xi = xi
        self.eps = eps
        self.k = k

    def __call__(self, model, image):
        logits = model(image)
        prob_x = nfunc.softmax(logits.detach(), dim=1)
        d = np.random.standard_normal(image.size())
        d = _l2_normalize(torch.FloatTensor(d).to(self.device))

        for ip in range(self.k):
            d *= self.xi
            d.requires_grad = True
            x_hat = image.detach() + d
            logits_x_hat = model(x_hat)
            log_prob_x_hat = nfunc.log_softmax(logits_x_hat, dim=1)
            adv_distance = torch.mean(torch.sum(-prob_x * log_prob_x_hat, dim=1))
            adv_distance.backward()  # expect: TML020
            grad_x_hat = d.grad
            d = _l2_normalize(grad_x_hat).to(self.device)

        logits_x_hat = model(image + self.eps * d)
        log_prob_x_hat = nfunc.log_softmax(logits_x_hat, dim=1)
        return torch.mean(torch.sum(-prob_x * log_prob_x_hat, dim=1))


def vat_train_step(epoch, model, train_loader, criterion, optimizer, device, lambdav):
    num, correct = 0, 0
    train_bar = tqdm(train_loader, desc=f"Training {epoch:0>3}")
    model.train()
    vat_criterion = VAT(device, eps=0.03, xi=1e-6)
    for dataset in train_bar:
        image = dataset[0][0].to(device)
        label = dataset[1].to(device)
        pred_x = model(image)
        pred = nfunc.softmax(pred_x, dim=1)
        gpl_loss = criterion(pred, label)
        vat_loss = lambdav * vat_criterion(model, image)

        optimizer.zero_grad()
        gpl_loss.backward()
        vat_loss.backward()
        optimizer.step()

        num += image.shape[0]
        correct += (pred.argmax(dim=1) == label).sum()
        train_bar.set_postfix({"Gpl_loss": gpl_loss.item(), "vat_loss": vat_loss.item(),
                               "Acc": (correct / num).item()})
    train_bar.close()
