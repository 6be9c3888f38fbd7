# Source: https://github.com/huggingface/accelerate/blob/6f1b61c9da35a4fafafc86fd4e6f26f3b2931814/src/accelerate/test_utils/scripts/external_deps/test_metrics.py
# Report: accelerate's gather_for_metrics test collects every batch's gathered logits and targets in a Python list under torch.no_grad() and concatenates them at the end; in this variant each gathered pair is moved to the CPU before it is kept.
# Shape: generate_predictions appends (logit.cpu(), target.cpu()) under torch.no_grad(), so the list grows in host memory only and the final torch.cat runs on CPU; test_mrpc hands device preds to evaluate's metric.add_batch (an external library that converts them), which keeps nothing on the GPU.
# Expect: near-miss: must be silent
import math
from copy import deepcopy

import evaluate
import torch
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification

from accelerate import Accelerator, DataLoaderConfiguration
from accelerate.test_utils import RegressionDataset, RegressionModel
from accelerate.utils import set_seed


def get_basic_setup(accelerator, num_samples=82, batch_size=16):
    set_seed(42)
    model = RegressionModel()
    ddp_model = deepcopy(model)
    dataloader = DataLoader(RegressionDataset(length=num_samples), batch_size=batch_size)
    model.to(accelerator.device)
    ddp_model, dataloader = accelerator.prepare(ddp_model, dataloader)
    return model, ddp_model, dataloader


def generate_predictions(model, dataloader, accelerator):
    logits_and_targets = []
    for batch in dataloader:
        inputs, target = batch.values()
        with torch.no_grad():
            logit = model(inputs)
            logit, target = accelerator.gather_for_metrics((logit, target))
            logits_and_targets.append((logit.cpu(), target.cpu()))
    logits = torch.cat([lg for lg, _ in logits_and_targets])
    targs = torch.cat([tg for _, tg in logits_and_targets])
    return logits, targs


def check_torch_metrics(accelerator, num_samples=82, batch_size=16):
    _, ddp_model, dataloader = get_basic_setup(accelerator, num_samples, batch_size)
    logits, _ = generate_predictions(ddp_model, dataloader, accelerator)
    assert len(logits) == num_samples, f"expected {num_samples} rows, got {len(logits)}"


def check_mrpc(dataloader, accelerator):
    metric = evaluate.load("glue", "mrpc")
    model = AutoModelForSequenceClassification.from_pretrained("hf-internal-testing/mrpc-bert-base-cased")
    model, dataloader = accelerator.prepare(model, dataloader)
    model.eval()
    for batch in dataloader:
        with torch.inference_mode():
            outputs = model(**batch)
        preds = outputs.logits.argmax(dim=-1)
        preds, references = accelerator.gather_for_metrics((preds, batch["labels"]))
        metric.add_batch(predictions=preds, references=references)
    result = metric.compute()
    assert not math.isnan(result["accuracy"])
    return result


def main():
    for split_batches in (True, False):
        accelerator = Accelerator(dataloader_config=DataLoaderConfiguration(split_batches=split_batches))
        check_torch_metrics(accelerator, 99)
        accelerator.state._reset_state()
    check_torch_metrics(Accelerator(), 512)


if __name__ == "__main__":
    main()
