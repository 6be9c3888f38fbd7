# Modelled on: https://runebook.dev/ja/docs/pytorch/generated/torch.nn.module/torch.nn.Module.register_forward_hook
# Report: a hook stays registered and keeps running until it is explicitly removed; registering again each epoch stacks them.
import torch


def fit_with_warmup(network, batches, opt, n_epochs, warmup_epochs=5):
    for ep in range(n_epochs):
        scale = min(1.0, (ep + 1) / warmup_epochs)
        for name, weight in network.named_parameters():
            if name.endswith("bias"):
                weight.register_hook(lambda g, s=scale: g * s)  # expect: TML007
        for inputs, labels in batches:
            logits = network(inputs)
            loss = torch.nn.functional.cross_entropy(logits, labels, label_smoothing=0.1)
            opt.zero_grad()
            loss.backward()
            opt.step()
