# Source: https://github.com/YFCodeDream/lhy-hw/blob/29516343168ae5953ca85448026cbcd8976990b4/hw-3/train.py
# Report: ML course homework 3 trainer, resume branch fixed the way the repo's own pretrainer loads weights: torch.load(..., map_location=device)
# Shape: map_location sends the checkpoint tensors straight to the run's device; validater evaluates under no_grad and keeps loss.item() floats
# Expect: near-miss: must be silent
import logging
import os

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


def validater(valid_loader, model, loss_fn, device):
    model.eval()
    valid_loss = list()
    for images, labels in valid_loader:
        with torch.no_grad():
            logits = model(images.to(device))
            loss = loss_fn(logits, labels.to(device))
            valid_loss.append(loss.item())
    return np.mean(valid_loss)


def save_state(path, epoch, model, optimizer):
    torch.save({
        'epoch': epoch,
        'optimizer_state_dict': optimizer.state_dict(),
        'model_state_dict': model.state_dict(),
    }, path)


def trainer(train_loader, valid_loader, model, config, device):
    loss_fn = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=config.lr)
    scheduler = optim.lr_scheduler.ExponentialLR(optimizer, 0.5 ** (1 / config.lr_half_life))
    ckpt_path = os.path.join(config.save_dir, 'model.pt')

    start_epoch = 0
    if config.restore:
        ckpt = torch.load(ckpt_path, map_location=device)
        start_epoch = ckpt['epoch'] + 1
        model.load_state_dict(ckpt['model_state_dict'])
        optimizer.load_state_dict(ckpt['optimizer_state_dict'])

    best, patience = np.inf, 0
    for epoch in range(start_epoch, config.num_epoch):
        model.train()
        train_loss = list()
        for images, labels in train_loader:
            logits = model(images.to(device))
            loss = loss_fn(logits, labels.to(device))
            train_loss.append(loss.item())

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
        logging.info(f'epoch {epoch + 1}: train loss {np.mean(train_loss):.4f}')

        valid_loss = validater(valid_loader, model, loss_fn, device)
        if valid_loss < best:
            best, patience = valid_loss, 0
            save_state(ckpt_path, epoch, model, optimizer)
        else:
            patience += 1
        if patience >= config.early_stopping_limit:
            return
