# Source: https://github.com/oscarknagg/few-shot/blob/672de83a853cc2d5e9fe304dc100b4a735c10c15/few_shot/maml.py
# Report: audit of the first-order MAML meta_gradient_step: every episode registers a param.register_hook on each meta-parameter that swaps in the task-averaged gradient; the repo keeps the handles and calls h.remove() after optimiser.step(), this is the variant it avoided, where the handles are dropped so each episode stacks another hook (holding that episode's averaged-gradient dict) on every parameter
# Shape: the repo's own shape: the hook handles are collected in a list while registering and every one is removed right after the optimiser step, so each episode leaves no hook behind
# Expect: near-miss: must be silent
from collections import OrderedDict

import torch
import torch.nn.functional as F


def nshot_labels(k_way, n):
    return torch.arange(0, k_way, 1 / n).long()


def replace_grad(parameter_gradients, parameter_name):
    def replace_grad_(grad):
        return parameter_gradients[parameter_name]

    return replace_grad_


def meta_gradient_step(model, optimiser, x, n_shot, k_way, q_queries, inner_lr, device):
    task_gradients, task_losses, task_predictions = [], [], []
    for meta_batch in x:
        support, query = meta_batch[: n_shot * k_way], meta_batch[n_shot * k_way:]
        params = OrderedDict(model.named_parameters())
        logits = model.functional_forward(support, params)
        loss = F.cross_entropy(logits, nshot_labels(k_way, n_shot).to(device))
        grads = torch.autograd.grad(loss, params.values())
        fast_weights = OrderedDict(
            (name, p - inner_lr * g) for ((name, p), g) in zip(params.items(), grads)
        )
        logits = model.functional_forward(query, fast_weights)
        loss = F.cross_entropy(logits, nshot_labels(k_way, q_queries).to(device))
        grads = torch.autograd.grad(loss, fast_weights.values())
        task_gradients.append({name: g for (name, _), g in zip(fast_weights.items(), grads)})
        task_losses.append(loss.detach())
        task_predictions.append(logits.detach().softmax(dim=1))

    mean_grads = {
        k: torch.stack([g[k] for g in task_gradients]).mean(dim=0) for k in task_gradients[0]
    }
    hooks = []
    for name, param in model.named_parameters():
        hooks.append(param.register_hook(replace_grad(mean_grads, name)))

    model.train()
    optimiser.zero_grad()
    dummy = model(torch.zeros((k_way,) + tuple(x.shape[2:]), device=device))
    F.cross_entropy(dummy, nshot_labels(k_way, 1).to(device)).backward()
    optimiser.step()
    for h in hooks:
        h.remove()
    return torch.stack(task_losses).mean(), torch.cat(task_predictions)


def fit(model, optimiser, episodes, epochs, n_shot=1, k_way=5, q_queries=5, device="cuda"):
    for epoch in range(epochs):
        history = []
        for x, _ in episodes:
            x = x.to(device)
            loss, preds = meta_gradient_step(
                model, optimiser, x, n_shot, k_way, q_queries, inner_lr=0.4, device=device
            )
            history.append(loss.item())
        print(f"epoch {epoch}: meta loss {sum(history) / len(history):.4f}")
