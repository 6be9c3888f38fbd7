# Source: https://github.com/facebookresearch/SEAL_OGB/blob/main/seal_link_pred.py
# Report: SEAL link prediction test() written without the @torch.no_grad() decorator the repository puts on it
# Shape: test() runs the model after model.eval() with grad on; logits.view(-1).cpu() still carries the graph, so y_pred pins every batch's GNN activations until torch.cat
# Expect: TML003 lines 43, 51; TML001 lines 44, 52
import torch
from torch.nn import BCEWithLogitsLoss


class Runner:
    def __init__(self, args, model, optimizer, loaders, evaluate_fn, device):
        self.args = args
        self.model = model
        self.optimizer = optimizer
        self.train_loader, self.val_loader, self.test_loader = loaders
        self.evaluate_fn = evaluate_fn
        self.device = device

    def _inputs(self, data):
        x = data.x if self.args.use_feature else None
        edge_weight = data.edge_weight if self.args.use_edge_weight else None
        node_id = data.node_id if self.args.use_emb else None
        return data.z, data.edge_index, data.batch, x, edge_weight, node_id

    def train(self):
        self.model.train()
        total_loss = 0
        for data in self.train_loader:
            data = data.to(self.device)
            self.optimizer.zero_grad()
            logits = self.model(*self._inputs(data))
            loss = BCEWithLogitsLoss()(logits.view(-1), data.y.to(torch.float))
            loss.backward()
            self.optimizer.step()
            total_loss += loss.item() * data.num_graphs
        return total_loss / len(self.train_loader.dataset)

    def test(self):
        self.model.eval()

        y_pred, y_true = [], []
        for data in self.val_loader:
            data = data.to(self.device)
            logits = self.model(*self._inputs(data))  # expect: TML003
            y_pred.append(logits.view(-1).cpu())  # expect: TML001
            y_true.append(data.y.view(-1).cpu().to(torch.float))
        val_pred, val_true = torch.cat(y_pred), torch.cat(y_true)

        y_pred, y_true = [], []
        for data in self.test_loader:
            data = data.to(self.device)
            logits = self.model(*self._inputs(data))  # expect: TML003
            y_pred.append(logits.view(-1).cpu())  # expect: TML001
            y_true.append(data.y.view(-1).cpu().to(torch.float))
        test_pred, test_true = torch.cat(y_pred), torch.cat(y_true)

        return self.evaluate_fn(val_pred[val_true == 1], val_pred[val_true == 0],
                                test_pred[test_true == 1], test_pred[test_true == 0])

    def fit(self, epochs, eval_steps):
        results = []
        for epoch in range(1, epochs + 1):
            loss = self.train()
            if epoch % eval_steps == 0:
                results.append((epoch, loss, self.test()))
        return results
