# Modelled on: https://github.com/facebookresearch/MetaBalance/issues/2
# Report: on a large dataset cuda memory grew until crash; suspected cause: the graph is never cleared by loss.backward(retain_graph=True).
import torch


def train(model, loader, optimizer, task_names):
    epoch_loss = 0
    for batch in loader:
        outputs = model(batch["x"])
        losses = [torch.nn.functional.mse_loss(outputs[name], batch[name]) for name in task_names]
        optimizer.zero_grad()
        for task_loss in losses:
            task_loss.backward(retain_graph=True)  # expect: TML006
        optimizer.step()
        epoch_loss += sum(losses)  # expect: TML001
    return epoch_loss
