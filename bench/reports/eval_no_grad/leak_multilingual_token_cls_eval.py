# Source: https://github.com/posos-tech/multilingual-alignment-and-transfer/blob/04388c79a860dbdba4d626b54b27d5a84cc3d5e2/multilingual_eval/training/evaluation_loops.py
# Report: audited: evaluate_token_classification calls model.eval() and runs the NER forward over the eval dataloader with no torch.no_grad(); logits are detached afterwards, so every batch still builds and saves the full autograd graph (higher peak)
# Shape: same helper layout (bring_batch_to_model, nested_concat of numpy logits, prefix_dictionary, several-dataset wrapper); the forward stays outside any grad-disabled context
# Expect: TML003 line 34
import logging
from collections import defaultdict

import torch
from torch.utils.data import DataLoader
from transformers import DataCollatorForTokenClassification
from transformers.trainer_pt_utils import nested_concat

logger = logging.getLogger(__name__)


def bring_batch_to_model(batch, model):
    device = next(model.parameters()).device
    return {key: value.to(device) for key, value in batch.items()}


def prefix_dictionary(dico, prefix=None):
    if prefix is None:
        return dico
    return {f"{prefix}_{key}": value for key, value in dico.items()}


def evaluate_token_classification(model, eval_dataloader, prefix="eval", metric_fn=None):
    model.eval()
    all_labels = None
    all_predictions = None
    for step, batch in enumerate(eval_dataloader):
        labels = batch["labels"].numpy()
        batch = bring_batch_to_model(batch, model)
        logits = model(**batch, return_dict=True).logits  # expect: TML003
        predictions = logits.detach().cpu().numpy()

        all_labels = labels if all_labels is None else nested_concat(
            all_labels, labels, padding_index=-100
        )
        all_predictions = predictions if all_predictions is None else nested_concat(
            all_predictions, predictions, padding_index=-100
        )
        if step % 50 == 0:
            logger.info("eval step %d", step)

    return prefix_dictionary(metric_fn((all_predictions, all_labels)), prefix)


def evaluate_several_token_classification(
    tokenizer, model, datasets, batch_size, prefixes=None, overall_prefix=None, metric_fn=None
):
    prefixes = prefixes or [str(i) for i in range(len(datasets))]
    collator = DataCollatorForTokenClassification(tokenizer)
    res = {}
    agg = defaultdict(lambda: 0)
    for dataset, prefix in zip(datasets, prefixes):
        loader = DataLoader(dataset, batch_size=batch_size, collate_fn=collator)
        next_res = evaluate_token_classification(model, loader, prefix=None, metric_fn=metric_fn)
        for key, value in next_res.items():
            agg[key] += value
        res.update(prefix_dictionary(next_res, prefix))
    res.update(prefix_dictionary({k: v / len(datasets) for k, v in agg.items()}, prefix="avg"))
    return prefix_dictionary(res, overall_prefix)
