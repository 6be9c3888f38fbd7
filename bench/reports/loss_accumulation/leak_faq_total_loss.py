# Source: https://github.com/pytorch/pytorch/pull/5251
# Report: The PR adding PyTorch's out-of-memory FAQ discussed a forum case where a training loop ran out of memory because total_loss accumulated the loss tensor itself, keeping autograd history alive across iterations.
# Shape: a Siamese-network loop adds each loss tensor (not its value) into a running total that is reported at the end.
# Expect: TML001 line 24
import torch
import torch.nn.functional as F


def contrastive_loss(e1, e2, same, margin=1.0):
    d = F.pairwise_distance(e1, e2)
    return (same * d.pow(2) + (1 - same) * F.relu(margin - d).pow(2)).mean()


def train(model, loader, optimizer, epochs=1, device="cuda"):
    history = []
    for epoch in range(epochs):
        total_loss = 0
        for x1, x2, same in loader:
            x1, x2, same = x1.to(device), x2.to(device), same.float().to(device)
            optimizer.zero_grad()
            loss = contrastive_loss(model(x1), model(x2), same)
            loss.backward()
            optimizer.step()
            total_loss += loss  # expect: TML001
        history.append(float(total_loss) / len(loader))
    return history
