# Source: https://github.com/cloudFPGA/DOSA/blob/11aa9a8e7b9425999bacb1c0d2b11d8f562b8624/src/train.py
# Report: the training loop deletes images/labels/outputs and then calls torch.cuda.empty_cache() and gc.collect() after every optimizer step, which frees no live tensor and makes every next step re-allocate from the driver
# Shape: the cache is released once, after training has finished and before the model is handed to export, outside every loop; the step loop only drops Python references
# Expect: near-miss: must be silent
import gc
import logging

import torch
import torch.nn as nn

log = logging.getLogger("dosa.train")


def pick_device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, labels in loader:
            preds = model(images.to(device)).argmax(dim=1)
            correct += (preds.cpu() == labels).sum().item()
            total += labels.numel()
    return 100.0 * correct / max(total, 1)


def train(model, epochs, train_loader, valid_loader, criterion=None, optimizer=None, log_every=100):
    device = pick_device()
    model.to(device)
    criterion = criterion or nn.CrossEntropyLoss()
    optimizer = optimizer or torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        model.train()
        epoch_loss, steps = 0.0, 0
        for i, (images, labels) in enumerate(train_loader):
            images = images.to(device)
            labels = labels.to(device)
            outputs = model(images)
            loss = criterion(outputs, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
            steps += 1
            del images, labels, outputs
            if i % log_every == 0:
                log.info("epoch %d step %d loss %.4f", epoch, i, loss.item())
        log.info("epoch [%d/%d] mean loss %.4f", epoch + 1, epochs, epoch_loss / max(steps, 1))
    acc = accuracy(model, valid_loader, device)
    log.info("accuracy on %d validation batches: %.2f %%", len(valid_loader), acc)
    # once, before the FPGA export step needs the memory back for other processes
    del optimizer
    gc.collect()
    torch.cuda.empty_cache()
    return {"val_acc": acc}
