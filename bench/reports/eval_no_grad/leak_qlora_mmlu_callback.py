# Source: https://github.com/artidoro/qlora/blob/main/qlora.py
# Report: QLoRA MMLU eval callback; one-edit mistake: the batch is fed to trainer.model(**batch) directly instead of trainer.prediction_step, so no grad-disabled context
# Shape: model.eval() then a direct forward per MMLU batch with no no_grad: activations of a 7B-65B model are saved for a backward that never comes (peak every batch)
# Expect: TML003 line 31
import numpy as np
import torch
import transformers
from torch.utils.data import Dataset
from tqdm import tqdm

IGNORE_INDEX = -100


def attach_mmlu_callback(trainer, tokenizer, mmlu_dataset, accuracy, args):
    abcd_idx = [
        tokenizer("A", add_special_tokens=False).input_ids[0],
        tokenizer("B", add_special_tokens=False).input_ids[0],
        tokenizer("C", add_special_tokens=False).input_ids[0],
        tokenizer("D", add_special_tokens=False).input_ids[0],
    ]

    class MMLUEvalCallback(transformers.TrainerCallback):
        def on_evaluate(self, args_, state, control, model, **kwargs):
            loader = trainer.get_eval_dataloader(mmlu_dataset)
            saved_len = trainer.data_collator.source_max_len
            trainer.data_collator.source_max_len = args.mmlu_source_max_len
            trainer.model.eval()
            preds, refs = [], []
            loss_mmlu = 0
            for batch in tqdm(loader, total=len(loader)):
                outputs = trainer.model(**batch)  # expect: TML003
                loss, logits, labels = outputs.loss, outputs.logits, batch["labels"]
                # answer token then eos: pick the logit just before the answer
                for i, logit in enumerate(logits):
                    first = (batch["labels"][i] != IGNORE_INDEX).nonzero()[0][0]
                    choice_logits = logit[first - 1][abcd_idx]
                    preds.append(torch.argmax(choice_logits).item())
                labels = labels[labels != IGNORE_INDEX].view(-1, 2)[:, 0]
                refs += [abcd_idx.index(tok) for tok in labels.tolist()]
                loss_mmlu += loss.item()

            results = {"mmlu_loss": loss_mmlu / len(loader)}
            by_subject = {}
            for subj, p, r in zip(mmlu_dataset["subject"], preds, refs):
                by_subject.setdefault(subj, {"refs": [], "preds": []})
                by_subject[subj]["preds"].append(p)
                by_subject[subj]["refs"].append(r)
            scores = []
            for subj, d in by_subject.items():
                acc = accuracy.compute(references=d["refs"], predictions=d["preds"])["accuracy"]
                results[f"mmlu_{args.mmlu_split}_accuracy_{subj}"] = acc
                scores.append(acc)
            results[f"mmlu_{args.mmlu_split}_accuracy"] = np.mean(scores)
            trainer.log(results)
            trainer.data_collator.source_max_len = saved_len

    trainer.add_callback(MMLUEvalCallback)
    return trainer
