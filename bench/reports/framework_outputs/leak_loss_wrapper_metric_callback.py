# Source: https://github.com/hitlic/deepepochs/blob/08e5797914056e6388f34007a74e6c2604dc2ad8/deepepochs/trainer/loss_wrapper.py
# Report: audit: the Keras-like trainer's LossWrapper detaches loss and model_out in on_metric_callback() before the per-batch metric callbacks keep them for the epoch; this is the variant that helper avoided, the wrapper hands the live tensors straight to the recorder
# Shape: LossWrapper.__call__ passes the graph-attached loss and the model's logits to its EpochRecorder, whose record() appends them to lists emptied only at epoch end, so every training batch's logits (and graph nodes) stay on the GPU all epoch
# Expect: TML001 line 47
import torch


class EpochRecorder:

    def __init__(self, metric_fns):
        self.metric_fns = metric_fns
        self.reset()

    def reset(self):
        self.losses, self.outputs, self.targets = [], [], []

    def record(self, loss, model_out, batch_y):
        self.losses.append(loss)
        self.outputs.append(model_out)
        self.targets.append(batch_y.cpu())

    def summarize(self):
        preds, ys = torch.cat(self.outputs), torch.cat(self.targets)
        row = {"loss": torch.stack(self.losses).mean().item()}
        for name, fn in self.metric_fns.items():
            row[name] = float(fn(preds, ys))
        self.reset()
        return row


class LossWrapper:

    def __init__(self, loss_fn, opt, metric_fns):
        self.loss_fn = loss_fn
        self.opt = opt
        self.recorder = EpochRecorder(metric_fns)

    def optimize(self):
        self.opt.step()
        self.opt.zero_grad()

    def __call__(self, model_out, batch_y, loss_adjust=1.0):
        loss = self.loss_fn(model_out, batch_y)
        (loss * loss_adjust).backward()
        self.optimize()
        # metric callback fed the live tensors: no detach on the way in
        self.recorder.record(loss, model_out, batch_y)  # expect: TML001
        return loss


def accuracy(preds, ys):
    return (preds.argmax(dim=1) == ys).float().mean()


class Trainer:
    def __init__(self, model, loss_fn, opt, metric_fns=None, device="cuda"):
        self.model, self.device = model.to(device), device
        self.loss = LossWrapper(loss_fn, opt, metric_fns or {"acc": accuracy})
        self.history = []

    def fit(self, train_dl, val_dl, epochs=10):
        for epoch in range(epochs):
            self.model.train()
            for x, y in train_dl:
                x, y = x.to(self.device), y.to(self.device)
                self.loss(self.model(x), y)
            row = self.loss.recorder.summarize()
            row.update(self.evaluate(val_dl))
            self.history.append(row)
            print(f"epoch {epoch}: " + ", ".join(f"{k}={v:.4f}" for k, v in row.items()))
        return self.history

    @torch.no_grad()
    def evaluate(self, val_dl):
        self.model.eval()
        loss_sum, correct, total = 0.0, 0, 0
        for x, y in val_dl:
            x, y = x.to(self.device), y.to(self.device)
            out = self.model(x)
            loss_sum += self.loss.loss_fn(out, y).item() * y.size(0)
            correct += (out.argmax(dim=1) == y).sum().item()
            total += y.size(0)
        return {"val_loss": loss_sum / total, "val_acc": correct / total}
