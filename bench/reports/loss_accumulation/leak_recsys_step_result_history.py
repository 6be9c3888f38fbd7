# Source: https://github.com/lachholland/multi-stage-recommender/blob/0a101da2475f178d9a8874190b1a7e85ea596707/src/recommender_system/model/util/train_util.py
# Report: the retrieval stage's train_step returns {'loss': loss_value, 'epoch': epoch} with the graph-attached loss tensor, and the caller appends every step's dict to loss_history for the whole run
# Shape: a helper returns a dict whose 'loss' entry is the attached CrossEntropy tensor; the training function appends that dict to a history list that outlives all epochs
# Expect: TML001 line 53
import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoTowerRetriever(nn.Module):
    """User tower and item tower; scores every item in the catalogue."""

    def __init__(self, n_users, n_items, dim=64):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, dim)
        self.item_emb = nn.Embedding(n_items, dim)
        self.user_mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, user_ids):
        u = F.normalize(self.user_mlp(self.user_emb(user_ids)), dim=-1)
        items = F.normalize(self.item_emb.weight, dim=-1)
        return u @ items.t() / 0.05


def train_step(model, optimizer, criterion, users, items, epoch):
    logits = model(users)
    loss_value = criterion(logits, items)
    optimizer.zero_grad()
    loss_value.backward()
    optimizer.step()
    hit = (logits.argmax(dim=1) == items).float().mean()
    return {"loss": loss_value, "hit@1": hit.item(), "epoch": epoch}


def summarize(loss_history, epoch):
    rows = [r for r in loss_history if r["epoch"] == epoch]
    mean_loss = sum(float(r["loss"]) for r in rows) / max(len(rows), 1)
    mean_hit = sum(r["hit@1"] for r in rows) / max(len(rows), 1)
    return mean_loss, mean_hit


def train_recommender(model, loader, epochs=10, lr=1e-3, device="cuda"):
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criterion = nn.CrossEntropyLoss()
    loss_history = []
    for epoch in range(epochs):
        model.train()
        for users, items in loader:
            users = users.to(device)
            items = items.to(device)
            result = train_step(model, optimizer, criterion, users, items, epoch)
            loss_history.append(result)  # expect: TML001
        mean_loss, mean_hit = summarize(loss_history, epoch)
        print(f"epoch {epoch}: loss {mean_loss:.4f} hit@1 {mean_hit:.3f}")
    return model, loss_history


if __name__ == "__main__":
    n_users, n_items = 5000, 2000
    users = torch.randint(0, n_users, (20000,))
    items = torch.randint(0, n_items, (20000,))
    ds = torch.utils.data.TensorDataset(users, items)
    loader = torch.utils.data.DataLoader(ds, batch_size=256, shuffle=True)
    train_recommender(TwoTowerRetriever(n_users, n_items), loader, epochs=3)
