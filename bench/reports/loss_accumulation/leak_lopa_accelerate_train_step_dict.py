# Source: https://github.com/jabhinav/Prompt-Tuning-Strikes-Back-with-LOPA-NLU/blob/1f3245b25f41adceecce967c30099ae2f7cea03d/trainers/base.py
# Report: one-edit-away variant (the step returns the raw loss tensors instead of .item() floats) of the base accelerate Trainer class of the LOPA prompt-tuning repo: _train_step runs under accelerator.accumulate and returns a dict of losses that _train_epoch sums per key for the epoch average
# Shape: _train_step returns {'total_loss': total_loss, 'clf_loss': clf_loss} still attached to the graph; _train_epoch stores the first one in the dict bound before the loop and then += every later one, chaining one graph per step for the whole epoch
# Expect: TML001 lines 50, 52
import accelerate
import evaluate
import torch
from tqdm import tqdm


class BaseTrainer:
    def __init__(self, args, model, optimizer, scheduler, train_dataloader, eval_dataloader, label_ids):
        self.args = args
        self.accelerator = accelerate.Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
        (self.model, self.optimizer, self.scheduler,
         self.train_dataloader, self.eval_dataloader) = self.accelerator.prepare(
            model, optimizer, scheduler, train_dataloader, eval_dataloader)
        self.label_ids = label_ids
        self.metric = evaluate.load("accuracy")
        self.step = 0
        self.epoch = 0

    def forward(self, batch):
        return self.model(batch)

    def _train_step(self, batch):
        with self.accelerator.accumulate(self.model):
            output = self.forward(batch)
            clf_loss = output.loss
            total_loss = clf_loss
            self.accelerator.backward(total_loss)
            self.optimizer.step()
            self.scheduler.step()
            self.optimizer.zero_grad()
            if self.accelerator.sync_gradients:
                self.step += 1
        return {
            "total_loss": total_loss,
            "clf_loss": clf_loss,
        }

    def _train_epoch(self):
        self.model.train()
        train_metrics: dict = {}
        for batch in tqdm(self.train_dataloader, desc=f"Training Epoch {self.epoch}",
                          disable=not self.accelerator.is_main_process):
            train_losses = self._train_step(batch)
            for key, value in train_losses.items():
                if key not in train_metrics:
                    train_metrics[key] = value  # expect: TML001
                else:
                    train_metrics[key] += value  # expect: TML001
            self.accelerator.log({"Step/Total Loss": train_losses["total_loss"],
                                  "Step/Learning Rate": self.optimizer.param_groups[0]["lr"]}, step=self.step)
        self.accelerator.wait_for_everyone()
        for key in train_metrics:
            train_metrics[key] = train_metrics[key] / len(self.train_dataloader) * self.args.gradient_accumulation_steps
        return train_metrics

    def _eval_epoch(self, dataloader):
        self.model.eval()
        for batch in tqdm(dataloader, desc=f"Evaluating Epoch {self.epoch}",
                          disable=not self.accelerator.is_main_process):
            with torch.no_grad():
                outputs = self.forward(batch)
                logits = outputs.logits[:, self.label_ids]
            logits, references = self.accelerator.gather((logits, batch["labels"]))
            for i, label in enumerate(self.label_ids):
                references[references == label] = i
            self.metric.add_batch(predictions=logits.argmax(dim=-1), references=references)
        return self.metric.compute()

    def train_loop(self):
        while self.epoch < self.args.num_epochs:
            train_metrics = self._train_epoch()
            eval_metrics = self._eval_epoch(self.eval_dataloader)
            for key, metric in {**train_metrics, **eval_metrics}.items():
                self.accelerator.log({f"Epoch/{key}": metric}, step=self.step)
            self.epoch += 1
        self.accelerator.end_training()
