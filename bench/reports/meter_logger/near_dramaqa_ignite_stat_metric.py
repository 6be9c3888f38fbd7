# Source: https://github.com/liveseongho/DramaQAChallenge2020/blob/17fc5cd8e68753d5b0aa4f17385c410832d9aa11/code/train.py
# Report: DramaQA baseline trains with an ignite Engine; a custom StatMetric attached to the trainer keeps a running sum of the per-iteration loss and top-1 accuracy for the epoch
# Shape: update_model returns loss.item() and detached predictions as engine.state.output; StatMetric.iteration_completed (decorated @torch.no_grad()) feeds them to update(), which adds into self._sum until the epoch restarts
# Expect: near-miss: must be silent
import torch
from ignite.engine import Engine, Events
from ignite.exceptions import NotComputableError
from ignite.metrics import Metric


class StatMetric(Metric):
    def __init__(self, output_transform=lambda x: x):
        super().__init__(output_transform)
        self.log_iter = True

    def reset(self):
        self._sum = 0
        self._num_examples = 0

    def update(self, output):
        average_value, n = output
        self._sum += average_value * n
        self._num_examples += n

    def compute(self):
        if self._num_examples == 0:
            raise NotComputableError("StatMetric needs at least one example")
        return self._sum / self._num_examples

    @torch.no_grad()
    def iteration_completed(self, engine, name):
        self.update(self._output_transform(engine.state.output))
        if self.log_iter:
            engine.state.metrics[name] = self.compute()

    def attach(self, engine, name):
        engine.add_event_handler(Events.EPOCH_COMPLETED, self.completed, name)
        if not engine.has_event_handler(self.started, Events.EPOCH_STARTED):
            engine.add_event_handler(Events.EPOCH_STARTED, self.started)
        if not engine.has_event_handler(self.iteration_completed, Events.ITERATION_COMPLETED):
            engine.add_event_handler(Events.ITERATION_COMPLETED, self.iteration_completed, name)


def get_trainer(model, loss_fn, optimizer, prepare_batch):
    def update_model(trainer, batch):
        model.train()
        optimizer.zero_grad()
        net_inputs, target = prepare_batch(batch)
        y_pred = model(**net_inputs)
        batch_size = y_pred.shape[0]
        loss, stats = loss_fn(y_pred, target)
        loss.backward()
        optimizer.step()
        return loss.item(), stats, batch_size, y_pred.detach(), target.detach()

    trainer = Engine(update_model)
    metrics = {
        "loss": StatMetric(output_transform=lambda x: (x[0], x[2])),
        "top1_acc": StatMetric(
            output_transform=lambda x: ((x[3].argmax(dim=-1) == x[4]).float().mean().item(), x[2])
        ),
    }
    for name, metric in metrics.items():
        metric.attach(trainer, name)
    return trainer


def train(model, loss_fn, optimizer, prepare_batch, train_iter, max_epochs, log_results):
    trainer = get_trainer(model, loss_fn, optimizer, prepare_batch)

    @trainer.on(Events.ITERATION_COMPLETED)
    def log_iter_results(engine):
        log_results("train/iter", engine.state.metrics, engine.state.iteration)

    trainer.run(train_iter, max_epochs=max_epochs)
