# Source: https://github.com/CIDARLAB/knoxAI/blob/1fb3acbf7bd7b942e16c6f8d37badc2599258449/evaluate/evaluate_model.py
# Report: audit of a genetic-design GNN trainer: test_model() runs each test graph under no_grad but appends the argmax prediction tensors (on the model's device) to a list for the whole test set, concatenating only after the loop; run_training calls it every epoch
# Shape: run_training hands the loader to the test_model helper each epoch; inside, the no_grad block is per batch and preds.append(pred) sits after it, so every batch's device tensor is kept until torch.cat at the end
# Expect: TML004 line 51
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.metrics import f1_score, roc_auc_score
from torch_geometric.loader import DataLoader
from torch_geometric.nn import GraphConv, global_mean_pool

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
METRICS = {"f1": f1_score, "auroc": roc_auc_score}


class GraphConvClassifier(nn.Module):
    def __init__(self, in_channels, hidden, out_channels=2, num_layers=3, dropout=0.2):
        super().__init__()
        dims = [in_channels] + [hidden] * num_layers
        self.convs = nn.ModuleList(GraphConv(a, b) for a, b in zip(dims[:-1], dims[1:]))
        self.dropout = dropout
        self.head = nn.Linear(hidden, out_channels)

    def forward(self, data):
        x = data.x
        for conv in self.convs:
            x = F.relu(conv(x, data.edge_index))
            x = F.dropout(x, self.dropout, self.training)
        return self.head(global_mean_pool(x, data.batch))


def load_data(dataset, config):
    cut = int(len(dataset) * config["train_test_split"])
    train_loader = DataLoader(dataset[:cut], batch_size=config["batch_size"], shuffle=True)
    test_loader = DataLoader(dataset[cut:], batch_size=1, shuffle=False)
    return train_loader, test_loader


def test_model(model, test_loader, config):
    criterion = nn.CrossEntropyLoss()
    preds, labels, losses = [], [], []
    model.eval()
    for data in test_loader:
        data = data.to(DEVICE)
        with torch.no_grad():
            logits = model(data)
            pred = logits.argmax(dim=1)
            losses.append(criterion(logits, data.y).item())
        preds.append(pred)  # expect: TML004
        labels.append(data.y.cpu())
    preds = torch.cat(preds, dim=0).cpu()
    labels = torch.cat(labels, dim=0)
    return sum(losses) / max(len(losses), 1), METRICS[config["metric"]](labels.numpy(), preds.numpy())


def run_training(dataset, config, verbose=True):
    train_loader, test_loader = load_data(dataset, config)
    model = GraphConvClassifier(dataset.num_node_features, config["hidden_channels"]).to(DEVICE)
    opt = torch.optim.Adam(model.parameters(), lr=config["learning_rate"])
    criterion = nn.CrossEntropyLoss()
    ckpt = os.path.join("model_checkpoints", f"{config['title']}.pt")
    os.makedirs("model_checkpoints", exist_ok=True)
    best, patience = None, 0
    for epoch in range(config["epochs"]):
        model.train()
        total_loss, total_graphs = 0.0, 0
        for batch in train_loader:
            batch = batch.to(DEVICE)
            opt.zero_grad()
            loss = criterion(model(batch), batch.y)
            loss.backward()
            opt.step()
            total_loss += loss.item() * batch.num_graphs
            total_graphs += batch.num_graphs
        test_loss, test_metric = test_model(model, test_loader, config)
        if verbose:
            print(f"Epoch {epoch + 1}: train {total_loss / total_graphs:.4f} test {test_loss:.4f} {config['metric']} {test_metric:.4f}")
        if best is None or test_loss < best:
            best, patience = test_loss, 0
            torch.save(model.state_dict(), ckpt)
        else:
            patience += 1
            if patience >= config["early_stopping_patience"]:
                break
    model.load_state_dict(torch.load(ckpt, map_location=DEVICE))
    return model, best
