# Source: https://github.com/facebookresearch/higher/issues/10
# Report: online 1-step meta-gradient training keeps the differentiable optimizer's fast weights/state alive across outer iterations; they still hold the autograd graph of every earlier step, so memory "leaks" until they are detached after each meta step
# Shape: plain-PyTorch rewrite of the higher inner loop: fast weights are a list carried across outer steps, updated with create_graph gradients, and the meta-parameter (a learned per-layer lr) is trained through them
# Expect: TML005 line 34; TML006 line 38
import torch
import torch.nn.functional as F


def functional_forward(x, weights):
    h = F.relu(F.linear(x, weights[0], weights[1]))
    return F.linear(h, weights[2], weights[3])


def init_weights(in_dim, hidden, out_dim, device):
    shapes = [(hidden, in_dim), (hidden,), (out_dim, hidden), (out_dim,)]
    return [(0.05 * torch.randn(*s, device=device)).requires_grad_(True) for s in shapes]


def online_meta_train(train_stream, val_stream, device="cuda", steps=20_000):
    fast_weights = init_weights(32, 128, 10, device)
    log_lrs = torch.full((4,), -3.0, device=device, requires_grad=True)
    meta_opt = torch.optim.Adam([log_lrs], lr=1e-3)
    history = []

    for step in range(steps):
        x_tr, y_tr = next(train_stream)
        x_val, y_val = next(val_stream)
        x_tr, y_tr = x_tr.to(device), y_tr.to(device)
        x_val, y_val = x_val.to(device), y_val.to(device)

        inner_loss = F.cross_entropy(functional_forward(x_tr, fast_weights), y_tr)
        grads = torch.autograd.grad(inner_loss, fast_weights, create_graph=True)
        lrs = log_lrs.exp()
        fast_weights = [w - lrs[k] * g for k, (w, g) in enumerate(zip(fast_weights, grads))]  # expect: TML005

        meta_loss = F.cross_entropy(functional_forward(x_val, fast_weights), y_val)
        meta_opt.zero_grad()
        meta_loss.backward(retain_graph=True)  # expect: TML006
        meta_opt.step()

        history.append(meta_loss.item())
    return fast_weights, log_lrs.detach(), history
