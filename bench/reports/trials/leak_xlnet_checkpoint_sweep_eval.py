# Source: https://github.com/ThilinaRajapakse/pytorch-transformers-classification/issues/1
# Report: Issue on run_model.ipynb discusses OOMs around the cell that evaluates every saved checkpoint in a loop; leak = the evaluate() cell without its torch.no_grad() block, each checkpoint's eval then building graphs nobody backpropagates.
# Shape: evaluate() calls model(**inputs) after model.eval() with grad enabled, so every eval batch saves XLNet activations for a backward that never comes (higher peak per batch, on top of the checkpoint models loaded one after another); kept values are still .item()/numpy.
# Expect: TML003 line 34
import glob
import os

import numpy as np
import torch
from sklearn.metrics import confusion_matrix, matthews_corrcoef
from torch.utils.data import DataLoader, SequentialSampler
from transformers import XLNetForSequenceClassification

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
args = {"output_dir": "outputs/", "eval_batch_size": 8, "model_type": "xlnet", "eval_all_checkpoints": True}


def get_eval_report(labels, preds):
    tn, fp, fn, tp = confusion_matrix(labels, preds).ravel()
    return {"mcc": matthews_corrcoef(labels, preds), "tp": tp, "tn": tn, "fp": fp, "fn": fn}


def evaluate(model, eval_dataset, prefix=""):
    results = {}
    eval_dataloader = DataLoader(eval_dataset, sampler=SequentialSampler(eval_dataset),
                                 batch_size=args["eval_batch_size"])
    eval_loss, nb_eval_steps = 0.0, 0
    preds, out_label_ids = None, None
    for batch in eval_dataloader:
        model.eval()
        batch = tuple(t.to(device) for t in batch)
        inputs = {"input_ids": batch[0], "attention_mask": batch[1],
                  "token_type_ids": batch[2], "labels": batch[3]}
        outputs = model(**inputs)  # expect: TML003
        tmp_eval_loss, logits = outputs[:2]
        eval_loss += tmp_eval_loss.mean().item()
        nb_eval_steps += 1
        if preds is None:
            preds = logits.detach().cpu().numpy()
            out_label_ids = inputs["labels"].detach().cpu().numpy()
        else:
            preds = np.append(preds, logits.detach().cpu().numpy(), axis=0)
            out_label_ids = np.append(out_label_ids, inputs["labels"].detach().cpu().numpy(), axis=0)
    eval_loss = eval_loss / nb_eval_steps
    result = get_eval_report(out_label_ids, np.argmax(preds, axis=1))
    result["eval_loss"] = eval_loss
    results.update(result)
    return results


def evaluate_all_checkpoints(eval_dataset):
    results = {}
    checkpoints = [args["output_dir"]]
    if args["eval_all_checkpoints"]:
        checkpoints = [os.path.dirname(c) for c in
                       sorted(glob.glob(args["output_dir"] + "/**/pytorch_model.bin", recursive=True))]
    for checkpoint in checkpoints:
        global_step = checkpoint.split("-")[-1] if len(checkpoints) > 1 else ""
        model = XLNetForSequenceClassification.from_pretrained(checkpoint)
        model.to(device)
        result = evaluate(model, eval_dataset, prefix=global_step)
        result = dict((k + "_{}".format(global_step), v) for k, v in result.items())
        results.update(result)
    return results
