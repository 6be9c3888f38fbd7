# Modelled on: https://github.com/SPOClab-ca/dn3/issues/38
# Report: the fix for GPU memory filling during prediction: run under no_grad and move outputs to the CPU before keeping them.
import torch


@torch.no_grad()
def predict(model, loader):
    model.eval()
    preds, labels = [], []
    for x, y in loader:
        logits = model(x.cuda())
        preds.append(logits.argmax(dim=1).cpu())
        labels.append(y)
    return torch.cat(preds), torch.cat(labels)
