# Source: https://github.com/facebookresearch/SlowFast/issues/411
# Report: During the evaluation epoch, model outputs and labels are added to a list in the val meter and stay in GPU memory, giving CUDA OOM on large validation sets.
# Shape: fixed variant: still under @torch.no_grad, but each batch is copied to host memory (.cpu()) before it is handed to the meter, so the growing lists hold only CPU tensors and GPU memory stays flat.
# Expect: near-miss: must be silent
import torch


class ValMeter:
    def __init__(self):
        self.all_preds = []
        self.all_labels = []
        self.num_top1_mis = 0.0
        self.num_samples = 0

    def update_stats(self, top1_err, mb_size):
        self.num_top1_mis += top1_err * mb_size
        self.num_samples += mb_size

    def update_predictions(self, preds, labels):
        self.all_preds.append(preds)
        self.all_labels.append(labels)

    def log_epoch_stats(self, epoch):
        all_preds = torch.cat(self.all_preds)
        all_labels = torch.cat(self.all_labels)
        acc = (all_preds.argmax(1) == all_labels).float().mean().item()
        print(f"epoch {epoch}: top1_err={self.num_top1_mis / self.num_samples:.2f} acc={acc:.3f}")
        self.all_preds, self.all_labels = [], []


@torch.no_grad()
def eval_epoch(val_loader, model, val_meter, cur_epoch):
    model.eval()
    for cur_iter, (inputs, labels) in enumerate(val_loader):
        inputs = inputs.cuda(non_blocking=True)
        labels = labels.cuda()
        preds = model(inputs)

        top1 = (preds.argmax(dim=1) != labels).float().mean() * 100.0
        val_meter.update_stats(top1.item(), inputs.size(0))

        # only host copies are kept for the epoch-level metrics
        val_meter.update_predictions(preds.cpu(), labels.cpu())

    val_meter.log_epoch_stats(cur_epoch)
