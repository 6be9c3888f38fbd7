# Source: https://github.com/txie-93/cgcnn/blob/1fdb2d7c237bfa85264b38cc5e57d49bd091ce5b/main.py
# Report: crystal-graph CNN validate(): torch.no_grad() wraps only the construction of the input/target Variables; the model forward and the loss run outside it after model.eval()
# Shape: output = model(*input_var) in a validation loop with grad enabled: every batch saves activations for a backward that never comes (higher peak); the meters get .item() values so nothing grows
# Expect: TML003 line 53
import time

import torch


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def mae(prediction, target):
    return torch.mean(torch.abs(target - prediction))


def validate(val_loader, model, criterion, normalizer, use_cuda=True, test=False):
    batch_time = AverageMeter()
    losses = AverageMeter()
    mae_errors = AverageMeter()
    test_preds, test_targets, test_cif_ids = [], [], []

    model.eval()
    end = time.time()
    for i, (inputs, target, batch_cif_ids) in enumerate(val_loader):
        if use_cuda:
            with torch.no_grad():
                input_var = (inputs[0].cuda(non_blocking=True),
                             inputs[1].cuda(non_blocking=True),
                             inputs[2].cuda(non_blocking=True),
                             inputs[3].cuda(non_blocking=True),
                             [idx.cuda(non_blocking=True) for idx in inputs[4]])
        else:
            input_var = inputs
        target_normed = normalizer.norm(target)
        with torch.no_grad():
            target_var = target_normed.cuda(non_blocking=True) if use_cuda else target_normed

        output = model(*input_var)  # expect: TML003
        loss = criterion(output, target_var)

        mae_error = mae(normalizer.denorm(output.data.cpu()), target)
        losses.update(loss.data.cpu().item(), target.size(0))
        mae_errors.update(mae_error, target.size(0))
        if test:
            test_pred = normalizer.denorm(output.data.cpu())
            test_preds += test_pred.view(-1).tolist()
            test_targets += target.view(-1).tolist()
            test_cif_ids += batch_cif_ids

        batch_time.update(time.time() - end)
        end = time.time()
        if i % 10 == 0:
            print(f"Test: [{i}/{len(val_loader)}] Loss {losses.val:.4f} ({losses.avg:.4f}) "
                  f"MAE {mae_errors.val:.3f} ({mae_errors.avg:.3f})")
    return mae_errors.avg
