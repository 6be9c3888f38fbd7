# Source: https://github.com/facebookresearch/SlowFast/issues/411
# Report: During the evaluation epoch, model outputs and labels are added to a list in the val meter and stay in GPU memory, giving CUDA OOM on large validation sets.
# Shape: eval_epoch runs under @torch.no_grad and hands every CUDA `preds`/`labels` batch to ValMeter.update_predictions, which appends them to self.all_preds for the whole epoch (no graph, but device tensors kept).
# Expect: TML004 line 44
import torch


class ValMeter:
    def __init__(self, num_classes):
        self.num_classes = num_classes
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

        # every batch of CUDA logits is parked in the meter until the epoch ends
        val_meter.update_predictions(preds, labels)  # expect: TML004

    val_meter.log_epoch_stats(cur_epoch)
