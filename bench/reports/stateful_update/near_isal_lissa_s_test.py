# Source: https://github.com/dragonlzm/ISAL/blob/078c71199bd88edd6e1795b6e627876008c5606d/classification/src/utils.py
# Report: correct code: LiSSA recursion for the inverse-Hessian-vector product used to score unlabeled images by influence
# Shape: the HVP helper takes a double backward with create_graph=True but detaches its result before returning it, so h_estimate carried across the loop holds plain tensors
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F
from torch.autograd import grad


def smooth_targets(labels, num_classes=10, eps=0.1):
    one_hot = F.one_hot(labels, num_classes).float()
    return one_hot * (1.0 - eps) + eps / num_classes


def soft_ce(preds, targets):
    return torch.sum(-targets * F.log_softmax(preds, dim=-1), dim=-1).mean()


def hessian_vec_prod(loss, params, h_estimate):
    """Hessian of the loss w.r.t. params times the current estimate."""
    if len(params) != len(h_estimate):
        raise ValueError("params and h_estimate must have the same length")
    first_grads = grad(loss, params, retain_graph=True, create_graph=True, allow_unused=True)
    dots = [torch.sum(g * v).unsqueeze(0) for g, v in zip(first_grads, h_estimate)]
    total = torch.cat(dots).sum()
    second = grad(total, params, create_graph=True, allow_unused=True)
    return [g.detach() for g in second]


def s_test(val_grad, model, params, train_loader, damp=0.01, scale=1e4, img_num=250):
    """Stochastic estimate of H^-1 v, restarted every img_num batches."""
    h_estimate = list(val_grad)
    estimates = []
    for it, (inputs, labels) in enumerate(train_loader):
        inputs, labels = inputs.cuda(), labels.cuda(non_blocking=True)
        preds = model(inputs)
        loss = soft_ce(preds, smooth_targets(labels))

        hv = hessian_vec_prod(loss, params, h_estimate)
        h_estimate = [_v if torch.isnan(_hv).any() else _v + (1 - damp) * _h_e - _hv / scale for _v, _h_e, _hv in zip(val_grad, h_estimate, hv)]

        if it % 100 == 0:
            print("s_test iteration", it)
        if it >= img_num * 4:
            break
        if it % img_num == img_num - 1:
            estimates.append(h_estimate)
            h_estimate = list(val_grad)
    return estimates


def influence_scores(model, unlabeled_loader, params, s_vec, n_total):
    flat_s = torch.cat([s.view(-1) for s in s_vec]).cuda()
    scores, indices = [], []
    for inputs, _, idx in unlabeled_loader:
        inputs = inputs.cuda()
        preds = model(inputs)
        pseudo = preds.softmax(-1).argmax(-1)
        loss = soft_ce(preds, smooth_targets(pseudo))
        g = grad(loss, params)
        flat_g = torch.cat([x.detach().view(-1) for x in g])
        scores.append(-torch.sum(flat_g * flat_s).cpu().numpy() / n_total)
        indices.append(idx)
    return scores, indices
