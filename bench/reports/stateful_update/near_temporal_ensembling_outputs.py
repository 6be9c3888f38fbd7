# Source: https://github.com/ferretj/temporal-ensembling/blob/89a0d3c1cf8cf1977e860ddf114b6051ca9ce922/temporal_ensembling.py
# Report: temporal ensembling keeps every sample's current prediction in a preallocated GPU buffer; the repository writes out.data.clone() so the buffer holds plain values
# Shape: current[slice] = logits.data.clone() stores values cut from the graph; the epoch-level ensemble update only mixes detached buffers
# Expect: near-miss: must be silent
import numpy as np
import torch
import torch.nn.functional as F


def consistency_loss(logits, targets, weight, labels):
    diff = torch.sum((F.softmax(logits, dim=1) - F.softmax(targets, dim=1)) ** 2)
    unsup = diff / logits.nelement()
    mask = labels >= 0
    if mask.any():
        sup = F.cross_entropy(logits[mask], labels[mask])
    else:
        sup = torch.zeros((), device=logits.device)
    return sup + weight * unsup, sup, unsup


def rampup(epoch, max_epochs, max_val, mult):
    if epoch == 0:
        return 0.0
    if epoch >= max_epochs:
        return max_val
    return max_val * np.exp(mult * (1.0 - float(epoch) / max_epochs) ** 2)


def fit(net, train_loader, n_train, n_classes=10, alpha=0.6, epochs=150, bs=100, lr=0.002):
    net.cuda().train()
    opt = torch.optim.Adam(net.parameters(), lr=lr, betas=(0.9, 0.99))
    ens = torch.zeros(n_train, n_classes, device="cuda")
    target = torch.zeros(n_train, n_classes, device="cuda")
    current = torch.zeros(n_train, n_classes, device="cuda")
    history = []
    for epoch in range(epochs):
        w = rampup(epoch, 80, 30.0, -5.0)
        epoch_losses = []
        for i, (images, labels) in enumerate(train_loader):
            images, labels = images.cuda(), labels.cuda()
            opt.zero_grad()
            logits = net(images)
            loss, sup, unsup = consistency_loss(logits, target[i * bs:(i + 1) * bs], w, labels)

            current[i * bs:(i + 1) * bs] = logits.data.clone()
            epoch_losses.append(loss.item())

            loss.backward()
            opt.step()

        ens = alpha * ens + (1.0 - alpha) * current
        target = ens * (1.0 / (1.0 - alpha ** (epoch + 1)))
        history.append(float(np.mean(epoch_losses)))
    return history
