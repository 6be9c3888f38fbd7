# Source: https://github.com/SKrisanski/FSCT/blob/02d4d77b4e087badcfdcabf8defd9ec1f7313457/scripts/train.py
# Report: audited bug: FSCT's per-epoch validation over the point-cloud validation_loader calls model.eval() and runs the segmentation net with autograd still on (no torch.no_grad()), so every validation batch saves activations for a backward that never comes
# Shape: the validation branch of run_training: model.eval(), `outputs = model(data)` and the loss per batch, only `.detach().item()` / `.item()` kept; the forward pass itself is not grad-disabled
# Expect: TML003 line 56
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class TrainModel:
    def __init__(self, parameters, model, train_loader, validation_loader):
        self.parameters = parameters
        self.device = parameters["device"]
        self.model = model.to(self.device)
        self.train_loader = train_loader
        self.validation_loader = validation_loader
        self.training_history = np.zeros((0, 5))

    def update_log(self, epoch, epoch_loss, epoch_acc, val_epoch_loss, val_epoch_acc):
        row = np.array([[epoch, epoch_loss, epoch_acc, val_epoch_loss, val_epoch_acc]])
        self.training_history = np.vstack((self.training_history, row))

    def run_training(self):
        model = self.model
        optimizer = optim.Adam(filter(lambda p: p.requires_grad, model.parameters()),
                               lr=self.parameters["learning_rate"])
        criterion = nn.CrossEntropyLoss()
        val_epoch_loss, val_epoch_acc = 0, 0
        for epoch in range(self.parameters["num_epochs"]):
            model.train()
            running_loss, running_acc = 0.0, 0
            for data in self.train_loader:
                data.pos = data.pos.to(self.device)
                data.y = torch.unsqueeze(data.y, 0).to(self.device)
                outputs = model(data)
                loss = criterion(outputs, data.y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                _, preds = torch.max(outputs, 1)
                running_loss += loss.detach().item()
                running_acc += torch.sum(preds == data.y.data).item() / data.y.shape[1]
            epoch_loss = running_loss / len(self.train_loader)
            epoch_acc = running_acc / len(self.train_loader)
            self.update_log(epoch, epoch_loss, epoch_acc, val_epoch_loss, val_epoch_acc)

            # VALIDATION
            if self.parameters["perform_validation_during_training"]:
                model.eval()
                running_loss, running_acc = 0.0, 0
                i = 0
                for data in self.validation_loader:
                    data.pos = data.pos.to(self.device)
                    data.y = torch.unsqueeze(data.y, 0).to(self.device)
                    outputs = model(data)  # expect: TML003
                    loss = criterion(outputs, data.y)
                    _, preds = torch.max(outputs, 1)
                    running_loss += loss.detach().item()
                    running_acc += torch.sum(preds == data.y.data).item() / data.y.shape[1]
                    if i % 50 == 0:
                        print("Validation sample accuracy: ", np.around(running_acc / (i + 1), 4),
                              ", Loss: ", np.around(running_loss / (i + 1), 4))
                    i += 1
                val_epoch_loss = running_loss / len(self.validation_loader)
                val_epoch_acc = running_acc / len(self.validation_loader)
                self.update_log(epoch, epoch_loss, epoch_acc, val_epoch_loss, val_epoch_acc)
            torch.save(model.state_dict(), self.parameters["model_filename"])
