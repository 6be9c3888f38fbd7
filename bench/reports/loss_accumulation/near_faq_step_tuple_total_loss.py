# Source: http://pytorch.org/docs/master/notes/faq.html
# Report: PyTorch FAQ "out of memory": total_loss += loss[0] looks like a scalar conversion but indexing keeps the differentiable value, so history accumulates across the training loop
# Shape: fixed as the FAQ says: the tuple element is converted with float() before it is added to the accumulator
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def train_step(model, optimizer, batch, device):
    inputs, targets = batch
    inputs, targets = inputs.to(device), targets.to(device)
    optimizer.zero_grad()
    logits = model(inputs)
    loss = F.cross_entropy(logits, targets)
    loss.backward()
    optimizer.step()
    n_correct = (logits.argmax(dim=1) == targets).sum().item()
    return loss, {"correct": n_correct, "seen": targets.size(0)}


def train_epoch(model, optimizer, loader, device="cuda"):
    model.train()
    total_loss = 0
    correct, seen = 0, 0
    for step, batch in enumerate(loader):
        out = train_step(model, optimizer, batch, device)
        total_loss += float(out[0])
        correct += out[1]["correct"]
        seen += out[1]["seen"]
        if step % 100 == 0:
            print(f"step {step}: running loss {float(total_loss) / (step + 1):.4f}")
    return float(total_loss) / max(len(loader), 1), correct / max(seen, 1)


def fit(model, optimizer, loader, epochs: int):
    history = []
    for epoch in range(epochs):
        history.append(train_epoch(model, optimizer, loader))
    return history
