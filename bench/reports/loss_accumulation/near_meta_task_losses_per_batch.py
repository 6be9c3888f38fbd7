# Source: https://github.com/myungsub/meta-interpolation/issues/4
# Report: a reader asked whether appending the task-wise meta losses (line 431) leaks GPU memory by generating graphs; the list is built for one meta-batch and its mean is backpropagated.
# Shape: the per-task losses are appended to a list created inside the meta-batch loop, stacked and backpropagated once per meta-batch; only a float is kept.
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def meta_train(model, meta_loader, meta_optimizer, inner_lr=1e-3):
    history = []
    for tasks in meta_loader:
        task_losses = []
        for support, query in tasks:
            params = dict(model.named_parameters())
            support_loss = F.l1_loss(torch.func.functional_call(model, params, support["frames"]), support["target"])
            grads = torch.autograd.grad(support_loss, list(params.values()), create_graph=True)
            adapted = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}
            query_loss = F.l1_loss(torch.func.functional_call(model, adapted, query["frames"]), query["target"])
            task_losses.append(query_loss)
        meta_loss = torch.stack(task_losses).mean()
        meta_optimizer.zero_grad()
        meta_loss.backward()
        meta_optimizer.step()
        history.append(meta_loss.item())
    return history
