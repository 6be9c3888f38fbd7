# Source: https://github.com/camillebrl/ai-optim/blob/11dc16f865374e8c8326546ee989cb98f3e53f21/lab3/lab3_2.py
# Report: for every pruning rate of the sweep, Pruning(model).thinet(rate) registers another forward hook on each conv layer of the same model and never removes it; the hook appends every layer input to module._inputs_hook, so the retraining forwards keep growing GPU lists and the hooks pile up per rate
# Shape: the rate sweep registers the input-recording hook on each conv inside the trial loop, calibrates, zeroes the cheapest input channels and fine-tunes; no handle is kept, so hooks and their stored inputs accumulate across trials
# Expect: TML007 line 52
import torch
import torch.nn as nn


def record_input(module, inputs, output):
    if hasattr(module, "_inputs_hook"):
        module._inputs_hook.append(inputs[0])
    else:
        module._inputs_hook = [inputs[0]]


def calibrate(model, loader, device, num_batches=2):
    model.eval()
    with torch.no_grad():
        for i, (images, _) in enumerate(loader):
            if i >= num_batches:
                break
            model(images.to(device))


def zero_weak_channels(conv, rate):
    # greedy ThiNet-style criterion: drop the input channels with the smallest contribution
    acts = torch.cat(conv._inputs_hook[:2], dim=0)
    energy = (acts.pow(2).mean(dim=(0, 2, 3)) * conv.weight.detach().pow(2).sum(dim=(0, 2, 3)))
    n_drop = int(rate * energy.numel())
    drop = torch.argsort(energy)[:n_drop]
    conv.weight.data[:, drop] = 0.0


def finetune(model, loader, optimizer, device, epochs):
    criterion = nn.CrossEntropyLoss()
    for _ in range(epochs):
        model.train()
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            optimizer.step()


def rate_sweep(model, train_loader, val_loader, device, rates=(0.1, 0.3, 0.5, 0.7), epochs=5):
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.95, weight_decay=5e-5)
    results = {}
    for rate in rates:
        for conv in convs:
            conv.register_forward_hook(record_input)  # expect: TML007
        calibrate(model, train_loader, device)
        for conv in convs[:10]:
            zero_weak_channels(conv, rate)
        finetune(model, train_loader, optimizer, device, epochs)
        model.eval()
        correct = total = 0
        with torch.no_grad():
            for images, labels in val_loader:
                preds = model(images.to(device)).argmax(dim=1).cpu()
                correct += (preds == labels).sum().item()
                total += labels.numel()
        results[rate] = 100.0 * correct / total
        print(f"rate {rate}: val acc {results[rate]:.2f}")
    return results
