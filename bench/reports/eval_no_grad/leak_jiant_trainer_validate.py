# Source: https://github.com/nyu-mll/jiant/pull/718
# Report: the multi-task trainer's periodic validation pass ran the model with autograd on, storing intermediate state for every validation batch; the PR wrapped the validation forward in torch.no_grad() to save time and memory
# Shape: _validate puts the model in eval mode and runs each batch through the trainer's _forward helper (the same helper training uses); losses are read through .data
# Expect: TML003 line 35
import logging as log
import time
from collections import defaultdict

import torch


class SamplingMultiTaskTrainer:
    def __init__(self, model, iterator, cuda_device=0, log_interval=60):
        self._model = model
        self._iterator = iterator
        self._cuda_device = cuda_device
        self._log_interval = log_interval

    def _forward(self, batch, task=None):
        batch = {k: v.cuda(self._cuda_device) if torch.is_tensor(v) else v for k, v in batch.items()}
        model_out = self._model.forward(task, batch)
        task.update_metrics(model_out, batch)
        return model_out

    def _validate(self, val_pass, tasks, batch_size):
        self._model.eval()
        all_val_metrics = defaultdict(float)
        n_examples_overall = 0
        for task in tasks:
            n_examples, batch_num = 0, 0
            last_log = time.time()
            val_generator = self._iterator(task.val_data, num_epochs=1, shuffle=False)
            for batch in val_generator:
                batch_num += 1
                out = self._forward(batch, task=task)  # expect: TML003
                loss = out["loss"]
                all_val_metrics["%s_loss" % task.name] += loss.data.cpu().numpy()
                n_examples += out["n_exs"]
                if time.time() - last_log > self._log_interval:
                    log.info("Validation pass %d, %s batch %d: loss %.3f",
                             val_pass, task.name, batch_num,
                             all_val_metrics["%s_loss" % task.name] / batch_num)
                    last_log = time.time()
            all_val_metrics["%s_loss" % task.name] /= max(batch_num, 1)
            for name, value in task.get_metrics(reset=True).items():
                all_val_metrics["%s_%s" % (task.name, name)] = value
            n_examples_overall += n_examples
        all_val_metrics["macro_avg"] = sum(
            v for k, v in all_val_metrics.items() if k.endswith("_loss")) / max(len(tasks), 1)
        self._model.train()
        return all_val_metrics, n_examples_overall
