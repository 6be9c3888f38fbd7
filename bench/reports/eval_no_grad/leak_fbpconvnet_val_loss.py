# Source: https://github.com/CambridgeCIA/LION/issues/115
# Report: FBPConvNet example training script computes validation loss after model.eval() without torch.no_grad(); GPU use rises from 11 GB to 18 GB during validation.
# Shape: validation block inside the epoch loop of a plain script; model.eval() then forward + loss with grad on, loss reduced with .item().
# Expect: TML003 line 37
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


def run_training(model, train_set, val_set, device, epochs=100, lr=1e-4):
    train_loader = DataLoader(train_set, batch_size=2, shuffle=True)
    val_loader = DataLoader(val_set, batch_size=2, shuffle=False)
    loss_fcn = nn.MSELoss()
    optimiser = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.99))
    train_loss = []
    valid_loss = []
    best_val = float("inf")

    for epoch in range(epochs):
        model.train()
        epoch_loss = 0.0
        for sino, target in train_loader:
            sino, target = sino.to(device), target.to(device)
            optimiser.zero_grad()
            reconstruction = model(sino)
            loss = loss_fcn(reconstruction, target)
            loss.backward()
            optimiser.step()
            epoch_loss += loss.item()
        train_loss.append(epoch_loss / len(train_loader))

        # validation
        model.eval()
        epoch_val = 0.0
        for sino, target in val_loader:
            sino, target = sino.to(device), target.to(device)
            reconstruction = model(sino)  # expect: TML003
            loss = loss_fcn(reconstruction, target)
            epoch_val += loss.item()
        valid_loss.append(epoch_val / len(val_loader))

        if valid_loss[-1] < best_val:
            best_val = valid_loss[-1]
            torch.save({"epoch": epoch, "model_state_dict": model.state_dict()}, "fbpconvnet_best.pt")
        print(f"epoch {epoch}: train {train_loss[-1]:.5f} val {valid_loss[-1]:.5f}")

    return train_loss, valid_loss
