# Source: https://github.com/pytorch/pytorch/issues/13613
# Report: during large-scale GPU inference the results were accumulated on the CPU with `y_predlabel = torch.cat((y_predlabel, batch_y_predlabel.cpu()))`, yet GPU memory kept increasing until "cuda out of memory"; commenting that line out removed the growth.
# Shape: the forward pass runs without torch.no_grad(), so each `.cpu()` copy still carries a grad_fn chaining back to the GPU activations of its batch, and the running torch.cat keeps every batch's graph alive.
# Expect: TML003 line 23
import csv

import torch
import torch.nn.functional as F


def load_batches(dataset, batch_size):
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size,
                                       shuffle=False, num_workers=4)


def predict_dataset(model, dataset, device="cuda", batch_size=256):
    model.to(device)
    model.eval()
    y_predlabel = torch.empty(0)
    y_true = torch.empty(0, dtype=torch.long)
    for batch_x, batch_y in load_batches(dataset, batch_size):
        batch_x = batch_x.to(device, non_blocking=True)
        logits = model(batch_x)  # expect: TML003
        batch_y_predlabel = F.softmax(logits, dim=1)
        y_predlabel = torch.cat((y_predlabel, batch_y_predlabel.cpu()))
        y_true = torch.cat((y_true, batch_y))
    return y_predlabel, y_true


def write_predictions(path, y_predlabel, y_true):
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["true", "pred", "confidence"])
        conf, pred = y_predlabel.max(dim=1)
        for t, p, c in zip(y_true.tolist(), pred.tolist(), conf.tolist()):
            writer.writerow([t, p, f"{c:.4f}"])
