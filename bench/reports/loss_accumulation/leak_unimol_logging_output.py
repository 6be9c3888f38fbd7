# Source: https://github.com/deepmodeling/Uni-Mol/issues/173
# Report: host memory grew every step because a custom loss put the live loss tensor (grad_fn attached) into logging_output, and the trainer keeps every logging_output for reduce_metrics
# Shape: the criterion returns (loss, sample_size, logging_output) with "loss": loss; the train loop appends each dict to a list that lives for the whole epoch
# Expect: TML001 line 53
import torch
import torch.nn.functional as F


class MaskedAtomLoss:
    """Masked-token loss in the unicore/fairseq criterion style."""

    def __init__(self, padding_idx, coord_weight=1.0):
        self.padding_idx = padding_idx
        self.coord_weight = coord_weight

    def __call__(self, model, sample):
        logits, coord_pred = model(**sample["net_input"])
        target = sample["target"]["tokens"]
        mask = target.ne(self.padding_idx)
        sample_size = int(mask.long().sum())
        token_loss = F.nll_loss(
            F.log_softmax(logits[mask], dim=-1, dtype=torch.float32),
            target[mask],
            reduction="sum",
        )
        coord_loss = F.smooth_l1_loss(
            coord_pred[mask], sample["target"]["coord"][mask], reduction="sum"
        )
        loss = token_loss + self.coord_weight * coord_loss
        logging_output = {
            "loss": loss,
            "token_loss": token_loss.detach().item(),
            "sample_size": sample_size,
            "bsz": target.size(0),
        }
        return loss, sample_size, logging_output

    @staticmethod
    def reduce_metrics(logging_outputs):
        loss_sum = sum(float(log["loss"]) for log in logging_outputs)
        size = sum(log["sample_size"] for log in logging_outputs)
        return loss_sum / max(size, 1)


def train_epoch(model, criterion, optimizer, loader, log_interval=100):
    model.train()
    logging_outputs = []
    for step, sample in enumerate(loader):
        optimizer.zero_grad()
        loss, sample_size, logging_output = criterion(model, sample)
        (loss / max(sample_size, 1)).backward()
        optimizer.step()
        logging_outputs.append(logging_output)  # expect: TML001
        if (step + 1) % log_interval == 0:
            print(f"step {step + 1}: loss {criterion.reduce_metrics(logging_outputs):.4f}")
    return criterion.reduce_metrics(logging_outputs)
