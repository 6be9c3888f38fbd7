# Modelled on: https://github.com/ItzikMalkiel/MTAdam/issues/2
# Report: near-miss: per-task gradients need the graph for every task but the last, which frees it.
import torch


def train(model, loader, optimizer, task_names):
    for batch in loader:
        outputs = model(batch["x"])
        losses = [torch.nn.functional.mse_loss(outputs[n], batch[n]) for n in task_names]
        optimizer.zero_grad()
        for i, task_loss in enumerate(losses):
            task_loss.backward(retain_graph=i < len(losses) - 1)
        optimizer.step()
