# Source: https://github.com/salesforce/corr_based_prediction/issues/1
# Report: optimizer.zero_grad() is called once outside the training stage, so gradients accumulate over all training batches
# Shape: fixed: zero_grad() moved inside the batch loop right before the forward pass
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


def train(model, train_loader, optimizer, args, device="cuda"):
    model.train()
    history = []
    for epoch in range(args.epochs):
        running = 0.0
        n_seen = 0
        for step, (x, y) in enumerate(train_loader):
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            scores = model(x)
            loss = F.cross_entropy(scores, y)
            loss.backward()
            if args.clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            running += loss.item() * x.size(0)
            n_seen += x.size(0)
        history.append(running / max(n_seen, 1))
        print(f"epoch {epoch}: train loss {history[-1]:.4f}")
    return history
