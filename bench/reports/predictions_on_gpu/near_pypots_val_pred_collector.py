# Source: https://github.com/WenjieDu/PyPOTS/issues/625
# Report: what the issue asks for: each validation batch's predictions and labels are moved to the CPU before they go into the epoch collectors
# Shape: same no_grad validation pass and per-epoch collectors, but each appended tensor is .cpu() first; only one batch's outputs live on the GPU at a time
# Expect: near-miss: must be silent
import numpy as np
import torch
from sklearn.metrics import accuracy_score


class BaseNNClassifier:
    def __init__(self, model, optimizer, epochs, patience, device="cuda"):
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.optimizer = optimizer
        self.epochs = epochs
        self.original_patience = patience
        self.patience = patience
        self.best_loss = float("inf")
        self.best_model_dict = None
        self.best_epoch = -1

    def _send_data_to_given_device(self, data):
        return [x.to(self.device) for x in data]

    def _assemble_input_for_training(self, data):
        indices, X, missing_mask, y = self._send_data_to_given_device(data)
        return {"indices": indices, "X": X, "missing_mask": missing_mask, "y": y}

    def _assemble_input_for_validating(self, data):
        return self._assemble_input_for_training(data)

    @staticmethod
    def val_metric_func(pred, target):
        return -accuracy_score(target, pred)

    def _train_model(self, training_loader, val_loader=None):
        self.best_loss = float("inf")
        self.best_model_dict = None

        for epoch in range(1, self.epochs + 1):
            self.model.train()
            epoch_train_loss_collector = []
            for idx, data in enumerate(training_loader):
                inputs = self._assemble_input_for_training(data)
                self.optimizer.zero_grad()
                results = self.model.forward(inputs)
                results["loss"].sum().backward()
                self.optimizer.step()
                epoch_train_loss_collector.append(results["loss"].sum().item())

            mean_train_loss = np.mean(epoch_train_loss_collector)

            if val_loader is None:
                mean_loss = mean_train_loss
            else:
                self.model.eval()
                epoch_val_pred_collector = []
                epoch_val_label_collector = []
                with torch.no_grad():
                    for idx, data in enumerate(val_loader):
                        inputs = self._assemble_input_for_validating(data)
                        results = self.model.forward(inputs)
                        epoch_val_pred_collector.append(results["classification_pred"].cpu())
                        epoch_val_label_collector.append(inputs["y"].cpu())

                preds = torch.cat(epoch_val_pred_collector, dim=0).numpy()
                labels = torch.cat(epoch_val_label_collector, dim=0).numpy()
                preds = np.argmax(preds, axis=1)
                mean_loss = self.val_metric_func(preds, labels)
                print(f"Epoch {epoch:03d} - train loss {mean_train_loss:.4f}, val metric {mean_loss:.4f}")

            if mean_loss < self.best_loss:
                self.best_epoch = epoch
                self.best_loss = mean_loss
                self.best_model_dict = self.model.state_dict()
                self.patience = self.original_patience
            else:
                self.patience -= 1
            if self.patience == 0:
                break

        self.model.load_state_dict(self.best_model_dict)
