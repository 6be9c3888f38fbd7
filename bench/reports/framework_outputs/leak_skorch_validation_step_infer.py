# Source: https://github.com/skorch-dev/skorch/issues/218
# Report: Fitting a PointNet through skorch ran out of GPU memory because validation_step() ran the module without torch.no_grad(); memory rose after every validation batch until the step was wrapped in no_grad.
# Shape: a skorch-like NeuralNet whose validation_step() switches the module to eval mode and calls self.infer() with autograd on, returning the loss and predictions to the fit loop and batch callbacks.
# Expect: TML003 line 38
import torch


class NeuralNet:
    def __init__(self, module, criterion, optimizer, device="cuda", callbacks=()):
        self.module_ = module.to(device)
        self.criterion_ = criterion
        self.optimizer_ = optimizer
        self.device = device
        self.callbacks = list(callbacks)
        self.history = []

    def notify(self, method_name, **cb_kwargs):
        for cb in self.callbacks:
            getattr(cb, method_name)(self, **cb_kwargs)

    def infer(self, x):
        return self.module_(x.to(self.device))

    def get_loss(self, y_pred, y_true):
        return self.criterion_(y_pred, y_true.to(self.device))

    def train_step(self, Xi, yi):
        self.module_.train(True)
        self.optimizer_.zero_grad()
        y_pred = self.infer(Xi)
        loss = self.get_loss(y_pred, yi)
        loss.backward()
        self.optimizer_.step()
        return {"loss": loss, "y_pred": y_pred}

    def validation_step(self, Xi, yi):
        self.module_.train(False)
        y_pred = self.infer(Xi)  # expect: TML003
        loss = self.get_loss(y_pred, yi)
        return {"loss": loss, "y_pred": y_pred}

    def run_single_epoch(self, iterator, training):
        step_fn = self.train_step if training else self.validation_step
        prefix = "train" if training else "valid"
        for Xi, yi in iterator:
            step = step_fn(Xi, yi)
            self.history.append({prefix + "_loss": step["loss"].item(), prefix + "_batch_size": len(Xi)})
            self.notify("on_batch_end", X=Xi, y=yi, training=training)

    def fit_loop(self, train_iter, valid_iter, epochs):
        for _ in range(epochs):
            self.run_single_epoch(train_iter, training=True)
            self.run_single_epoch(valid_iter, training=False)
        return self
