# Modelled on: https://github.com/pytorch/pytorch/issues/4932
# Report: in the validation phase of the ImageNet example the GPU used more and more memory (volatile=True had stopped working; no_grad was needed).
import torch


def validate(val_loader, model, topk=(1, 5)):
    hits = {k: 0 for k in topk}
    seen = 0
    for images, target in val_loader:
        images = images.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        logits = model(images)  # expect: TML003
        _, ranked = logits.topk(max(topk), dim=1)
        matches = ranked.eq(target[:, None])
        for k in topk:
            hits[k] += matches[:, :k].any(dim=1).sum().item()
        seen += target.shape[0]
    return {f"top{k}": hits[k] / seen for k in topk}
